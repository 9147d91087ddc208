import { describe, expect, it } from 'vitest';
import { maskSecrets } from './mask-secrets.ts';

describe('maskSecrets', () => {
  it('masks the password of a URL with credentials, keeping everything else as written', () => {
    expect(maskSecrets('postgres://kloop:S3cret-PW_99@127.0.0.1:5432/test?schema=h16')).toBe(
      'postgres://kloop:***@127.0.0.1:5432/test?schema=h16',
    );
    expect(maskSecrets('postgresql://user:p%40ss@db/lab')).toBe('postgresql://user:***@db/lab');
    expect(
      maskSecrets('kloop: postgres://a:b@h/d: this study has no database yet; see also https://x:y@example.test/'),
    ).toBe('kloop: postgres://a:***@h/d: this study has no database yet; see also https://x:***@example.test/');
    expect(maskSecrets('{"database": "postgres://kloop:s3cret@db/lab"}')).toBe(
      '{"database": "postgres://kloop:***@db/lab"}',
    );
  });

  it("masks libpq's password parameters in a query or a key/value connection string", () => {
    expect(maskSecrets('postgres://db/lab?password=s3cret&sslmode=require')).toBe(
      'postgres://db/lab?password=***&sslmode=require',
    );
    expect(maskSecrets('host=db user=kloop password=s3cret sslpassword=k3y dbname=lab')).toBe(
      'host=db user=kloop password=*** sslpassword=*** dbname=lab',
    );
  });

  it('leaves text without a secret alone, and is idempotent', () => {
    for (const text of [
      'postgres://kloop@db:5432/lab',
      '/tmp/study/.kloop/kloop.db',
      'http://127.0.0.1:8080/v1',
      'a: b@c',
      '',
    ])
      expect(maskSecrets(text)).toBe(text);
    const once = maskSecrets('postgres://kloop:s3cret@db/lab?password=x');
    expect(maskSecrets(once)).toBe(once);
  });
});
