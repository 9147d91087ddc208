/**
 * The one function that masks secrets in what kloop prints or returns as
 * text: messages, errors, reports, `kloop config`, `kloop doctor`, `--json`.
 *
 * What it masks, as `***`:
 *
 * - the password of any URL with credentials, e.g. a PostgreSQL storage URL:
 *   `postgres://kloop:s3cret@db:5432/lab` → `postgres://kloop:***@db:5432/lab`
 *   (the user name, host, port, path and query are kept as written);
 * - the value of libpq's `password` and `sslpassword` parameters, in a URL's
 *   query (`?password=s3cret`) or a key/value connection string
 *   (`host=db password=s3cret`).
 *
 * API keys are not in this text form: the model providers know their values
 * and redact them from every message (`providers/create-language-model.ts`,
 * `redactSecrets`).
 *
 * @module
 */

/** `scheme://user:password@`: the password is the second group. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/?#@]*):([^\s/?#@]+)@/gi;

/** `password=value` or `sslpassword=value` (libpq's names), up to `&`, `#`, a quote or white space. */
const PASSWORD_PARAMETER = /\b(password|sslpassword)=([^&#\s'"]+)/gi;

/** What a secret is replaced with. */
export const SECRET_MASK = '***';

/**
 * Masks every password a text holds (see the module comment). Text without
 * one comes back unchanged; masking twice is masking once.
 *
 * @example
 * ```ts
 * maskSecrets('postgres://kloop:s3cret@db:5432/lab?schema=triage'); // 'postgres://kloop:***@db:5432/lab?schema=triage'
 * maskSecrets('cannot connect to postgresql://db/lab?password=s3cret&sslmode=require'); // 'cannot connect to postgresql://db/lab?password=***&sslmode=require'
 * ```
 */
export function maskSecrets(text: string): string {
  return text.replace(URL_CREDENTIALS, `$1:${SECRET_MASK}@`).replace(PASSWORD_PARAMETER, `$1=${SECRET_MASK}`);
}
