/**
 * A scripted server on 127.0.0.1 (random port) that speaks the OpenAI chat
 * completions API, for tests that run the real provider code path over HTTP.
 * Never leaves loopback.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface ChatRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: {
    model?: string;
    messages?: Array<{ role: string; content: unknown }>;
    response_format?: { type: string; json_schema?: { name?: string; schema?: unknown } };
    max_tokens?: number;
    max_completion_tokens?: number;
    temperature?: number;
    seed?: number;
  };
  /** Text of the system message. */
  system: string;
  /** Text of the (last) user message. */
  user: string;
  /** 0-based index of this request among all requests. */
  index: number;
}

export type FakeResponse =
  | {
      content: string;
      finishReason?: 'stop' | 'length' | 'content_filter';
      usage?: { prompt_tokens: number; completion_tokens: number };
      delayMs?: number;
    }
  | {
      status: number;
      /** JSON body. Default `{ error: { message: 'scripted HTTP <status>' } }`. */
      body?: unknown;
      /** A body sent as is instead of `body` (an HTML page, a cut-off JSON text). */
      rawBody?: string;
      headers?: Record<string, string>;
      delayMs?: number;
    };

export interface FakeServer {
  /** Base URL including `/v1`, e.g. `http://127.0.0.1:41234/v1`. */
  baseURL: string;
  requests: ChatRequest[];
  /** Number of HTTP requests received so far. */
  readonly calls: number;
  /** Requests whose client closed the connection before the answer was sent (an aborted call). */
  readonly aborted: number;
  close(): Promise<void>;
}

function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
      .join('');
  return '';
}

/** Starts the server; `respond` scripts each answer. */
export async function startFakeOpenAiServer(
  respond: (request: ChatRequest) => FakeResponse | Promise<FakeResponse>,
): Promise<FakeServer> {
  const requests: ChatRequest[] = [];
  let aborted = 0;
  const server: Server = createServer((incoming, outgoing) => {
    outgoing.once('close', () => {
      if (!outgoing.writableFinished) aborted += 1;
    });
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void (async () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let body: ChatRequest['body'] = {};
        try {
          body = text === '' ? {} : (JSON.parse(text) as ChatRequest['body']);
        } catch {
          body = {};
        }
        const messages = body.messages ?? [];
        const request: ChatRequest = {
          path: incoming.url ?? '',
          headers: incoming.headers,
          body,
          system: messages
            .filter((message) => message.role === 'system')
            .map((message) => messageText(message.content))
            .join('\n'),
          user: messageText([...messages].reverse().find((message) => message.role === 'user')?.content ?? ''),
          index: requests.length,
        };
        requests.push(request);
        if (incoming.method !== 'POST' || !request.path.startsWith('/v1/chat/completions')) {
          outgoing.writeHead(404, { 'content-type': 'application/json' });
          outgoing.end(JSON.stringify({ error: { message: `no route ${incoming.method} ${request.path}` } }));
          return;
        }
        const answer = await respond(request);
        if (answer.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
        if (outgoing.destroyed) return;
        if ('status' in answer) {
          outgoing.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
          outgoing.end(
            answer.rawBody ??
              JSON.stringify(
                answer.body ?? { error: { message: `scripted HTTP ${answer.status}`, type: 'server_error' } },
              ),
          );
          return;
        }
        outgoing.writeHead(200, { 'content-type': 'application/json' });
        outgoing.end(
          JSON.stringify({
            id: `chatcmpl-${request.index}`,
            object: 'chat.completion',
            created: 1_700_000_000,
            model: body.model ?? 'fake',
            choices: [
              {
                index: 0,
                message: { role: 'assistant', content: answer.content },
                finish_reason: answer.finishReason ?? 'stop',
              },
            ],
            usage: {
              prompt_tokens: answer.usage?.prompt_tokens ?? 100,
              completion_tokens: answer.usage?.completion_tokens ?? 50,
              total_tokens: (answer.usage?.prompt_tokens ?? 100) + (answer.usage?.completion_tokens ?? 50),
            },
          }),
        );
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get calls() {
      return requests.length;
    },
    get aborted() {
      return aborted;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A fetch that refuses anything but loopback, so a test can never reach the network. */
export const loopbackFetch: typeof fetch = async (input, init) => {
  const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
  if (url.hostname !== '127.0.0.1' && url.hostname !== 'localhost')
    throw new Error(`test tried to leave loopback: ${url.href}`);
  return fetch(input, init);
};
