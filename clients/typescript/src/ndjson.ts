import { YardstickError } from "./errors.js";

const ndjson = "application/x-ndjson";

/** The paths of a service's types whose body is NDJSON: its batch and group streams. */
export type StreamPath<Paths> = {
  [P in keyof Paths]: Paths[P] extends { post: { requestBody: { content: { "application/x-ndjson": unknown } } } } ? P : never;
}[keyof Paths];

/** One line of the body of stream path P. */
export type LineIn<Paths, P extends keyof Paths> = Paths[P] extends {
  post: { requestBody: { content: { "application/x-ndjson": infer L } } };
}
  ? L
  : never;

/** One line of the answer of stream path P. */
export type LineOut<Paths, P extends keyof Paths> = Paths[P] extends {
  post: { responses: { 200: { content: { "application/x-ndjson": infer L } } } };
}
  ? L
  : never;

/** How a stream is sent. */
export interface StreamOptions {
  /** Cancels the stream: the request is aborted and the input is not read further. */
  signal?: AbortSignal;
}

// Lines sent in one chunk at most; fewer when the input has nothing more ready.
const chunkBytes = 64 * 1024;
const notReady = Symbol("not ready");

/**
 * The body of a stream: lines read from input only as the connection takes them (a pull
 * source), so a slow service slows the reading and nothing is buffered beyond a chunk. Lines
 * ready together go in one chunk; a line the input does not have yet is waited for, after what
 * is ready has been sent.
 */
function bodyOf<T>(input: AsyncIterable<T> | Iterable<T>): ReadableStream<Uint8Array> {
  const it: AsyncIterator<T> | Iterator<T> =
    Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : (input as Iterable<T>)[Symbol.iterator]();
  const encoder = new TextEncoder();
  let pending: Promise<IteratorResult<T>> | undefined;
  return new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        let chunk = "";
        let done = false;
        while (chunk.length < chunkBytes) {
          const next = pending ?? Promise.resolve(it.next());
          pending = undefined;
          let r: IteratorResult<T> | typeof notReady;
          if (chunk === "") {
            r = await next;
          } else {
            r = await Promise.race([next, new Promise<typeof notReady>((res) => setImmediate(res, notReady))]);
            if (r === notReady) {
              pending = next;
              break;
            }
          }
          if (r.done) {
            done = true;
            break;
          }
          chunk += JSON.stringify(r.value) + "\n";
        }
        if (chunk !== "") {
          controller.enqueue(encoder.encode(chunk));
        }
        if (done) {
          controller.close();
        }
      },
      async cancel() {
        await it.return?.();
      },
    },
    { highWaterMark: 1 },
  );
}

/** Splits a body into its lines and parses each; blank lines are skipped. */
async function* linesOf<T>(body: ReadableStream<Uint8Array>): AsyncGenerator<T> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buf = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) {
        break;
      }
      buf += decoder.decode(value, { stream: true });
      let start = 0;
      for (let nl = buf.indexOf("\n", start); nl >= 0; nl = buf.indexOf("\n", start)) {
        const line = buf.slice(start, nl);
        start = nl + 1;
        if (line.trim() !== "") {
          yield JSON.parse(line) as T;
        }
      }
      buf = buf.slice(start);
    }
    buf += decoder.decode();
    if (buf.trim() !== "") {
      yield JSON.parse(buf) as T;
    }
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** What stream() needs of a service client. */
export interface StreamTarget {
  baseUrl: string;
  token: () => Promise<string>;
  fetch: typeof fetch;
}

/**
 * Sends input as the NDJSON body of url and yields the answer's lines as they arrive, in the
 * service's order (the input's). The body and the answer flow at once: the input is read only
 * as fast as the service takes it, and the service answers as it goes, so neither side holds
 * the whole stream. A refusal before the first line (401, 403, 415, 503) is thrown as a
 * YardstickError.
 */
export async function* stream<In, Out>(target: StreamTarget, path: string, input: AsyncIterable<In> | Iterable<In>, opts: StreamOptions = {}): AsyncGenerator<Out> {
  const token = await target.token();
  const res = await target.fetch(new URL(path, target.baseUrl), {
    method: "POST",
    headers: { "Content-Type": ndjson, Accept: ndjson, Authorization: `Bearer ${token}` },
    body: bodyOf(input),
    signal: opts.signal,
    // A streamed request body: the answer is read while the body is still being sent.
    duplex: "half",
  } as RequestInit);
  if (!res.ok || res.body === null) {
    throw await YardstickError.from(res, `POST ${path}`);
  }
  yield* linesOf<Out>(res.body);
}
