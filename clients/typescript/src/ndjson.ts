import http from "node:http";
import https from "node:https";
import { once } from "node:events";
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
 * The body of a stream, in chunks of lines: lines the input has ready together go in one chunk;
 * a line it does not have yet is waited for once what is ready has been sent. The input is read
 * only as the chunks are taken.
 */
async function* chunksOf<T>(input: AsyncIterable<T> | Iterable<T>): AsyncGenerator<string> {
  const it: AsyncIterator<T> | Iterator<T> =
    Symbol.asyncIterator in input ? input[Symbol.asyncIterator]() : (input as Iterable<T>)[Symbol.iterator]();
  let pending: Promise<IteratorResult<T>> | undefined;
  let done = false;
  try {
    while (!done) {
      let chunk = "";
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
        yield chunk;
      }
    }
  } finally {
    if (!done) {
      await it.return?.();
    }
  }
}

/** Splits a body into its lines and parses each; blank lines are skipped. */
async function* linesOf<T>(body: AsyncIterable<Buffer>): AsyncGenerator<T> {
  const decoder = new TextDecoder();
  let buf = "";
  for await (const value of body) {
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
}

/** What stream() needs of a service client. */
export interface StreamTarget {
  baseUrl: string;
  token: () => Promise<string>;
}

/**
 * Sends input as the NDJSON body of path and yields the answer's lines as they arrive, in the
 * service's order (the input's). The body and the answer flow at once, each with backpressure:
 * the input is read only as fast as the connection takes it, and the answer only as fast as the
 * caller iterates, so neither side holds the stream whole. A caller that stops iterating ends
 * the request. A refusal before the first line (401, 403, 415, 503) is thrown as a
 * YardstickError.
 *
 * It speaks node:http rather than fetch: fetch keeps a copy of a streamed body it might resend,
 * and leaves a cancelled upload's connection waiting; a stream needs neither.
 */
export async function* stream<In, Out>(target: StreamTarget, path: string, input: AsyncIterable<In> | Iterable<In>, opts: StreamOptions = {}): AsyncGenerator<Out> {
  const token = await target.token();
  const url = new URL(path, target.baseUrl);
  const abort = new AbortController();
  const stopOnCaller = () => abort.abort(opts.signal?.reason);
  if (opts.signal?.aborted) {
    stopOnCaller();
  }
  opts.signal?.addEventListener("abort", stopOnCaller, { once: true });
  // agent: false: a connection of its own, closed with the stream.
  const req = (url.protocol === "https:" ? https : http).request(url, {
    method: "POST",
    headers: { "Content-Type": ndjson, Accept: ndjson, Authorization: `Bearer ${token}` },
    agent: false,
    signal: abort.signal,
  });
  const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
    req.once("response", resolve);
    req.once("error", reject);
  });
  // The body is written as the socket drains; a request that ends (answered early, aborted)
  // stops it, and the input is closed.
  const sent = (async () => {
    for await (const chunk of chunksOf(input)) {
      if (!req.write(chunk)) {
        await once(req, "drain", { signal: abort.signal });
      }
    }
    req.end();
  })();
  sent.catch(() => {}); // its failure is the request's, reported by answered or the answer
  let complete = false;
  try {
    const res = await answered;
    if (res.statusCode !== 200) {
      throw await refusal(res, path);
    }
    yield* linesOf<Out>(res);
    complete = true;
  } finally {
    opts.signal?.removeEventListener("abort", stopOnCaller);
    if (!complete) {
      abort.abort(new Error("the caller stopped reading the stream"));
    }
  }
}

/** The YardstickError of a stream refused before its first line. */
async function refusal(res: http.IncomingMessage, path: string): Promise<YardstickError> {
  let text = "";
  for await (const chunk of res) {
    text += chunk;
  }
  const headers = new Headers();
  for (const [k, v] of Object.entries(res.headers)) {
    if (typeof v === "string") headers.set(k, v);
  }
  return YardstickError.from(new Response(text, { status: res.statusCode ?? 0, headers }), `POST ${path}`);
}
