import { YardstickError } from "./errors.js";

export const ndjson = "application/x-ndjson";

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
  /**
   * How the request goes out. "node": node:http, the body streamed (the default under Node).
   * "fetch": the fetch of the client's options (the default elsewhere: browsers, Deno, workers),
   * its body as the upload option says.
   */
  transport?: "node" | "fetch";
  /**
   * With fetch, how each request's body goes (a batch goes in pieces of 256 KiB, fetchstream.ts):
   * "stream" as a ReadableStream (fetch's duplex "half"), "buffer" as one Blob. "auto" (the
   * default) streams where a browser can (a fetch that takes a stream, over https:, where
   * browsers speak HTTP/2, which Chromium requires of a streamed upload) and buffers elsewhere.
   */
  upload?: "auto" | "stream" | "buffer";
}

// Lines sent in one chunk at most; fewer when the input has nothing more ready.
const chunkBytes = 64 * 1024;
const notReady = Symbol("not ready");

/** A turn of the event loop: setImmediate under Node, a zero timeout in browsers. */
const nextTurn: (f: (v: typeof notReady) => void) => void =
  typeof setImmediate === "function" ? (f) => setImmediate(f, notReady) : (f) => setTimeout(f, 0, notReady);

/**
 * The body of a stream, in chunks of lines: lines the input has ready together go in one chunk;
 * a line it does not have yet is waited for once what is ready has been sent. The input is read
 * only as the chunks are taken.
 */
export async function* chunksOf<T>(input: AsyncIterable<T> | Iterable<T>): AsyncGenerator<string> {
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
          r = await Promise.race([next, new Promise<typeof notReady>(nextTurn)]);
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
export async function* linesOf<T>(body: AsyncIterable<Uint8Array>): AsyncGenerator<T> {
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
  fetch: typeof fetch;
}

/** A request sent by node:http: its status, its body's chunks, and its refusal read into an error. */
export interface Answer {
  status: number;
  body: AsyncIterable<Uint8Array>;
  refusal: () => Promise<YardstickError>;
}

/** Whether this runs under Node (where node:http is there to use). */
const underNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

/**
 * Sends input as the NDJSON body of path and yields the answer's lines as they arrive, in the
 * service's order (the input's). The body and the answer flow at once, each with backpressure:
 * the input is read only as fast as the connection takes it, and the answer only as fast as the
 * caller iterates, so neither side holds the stream whole (but a buffered fetch upload, see
 * StreamOptions.upload). A caller that stops iterating ends the request. A refusal before the
 * first line (401, 403, 415, 503) is thrown as a YardstickError.
 *
 * Under Node it speaks node:http rather than fetch: fetch keeps a copy of a streamed body it
 * might resend, and leaves a cancelled upload's connection waiting; a stream needs neither.
 */
export async function* stream<In, Out>(target: StreamTarget, path: string, input: AsyncIterable<In> | Iterable<In>, opts: StreamOptions = {}): AsyncGenerator<Out> {
  const url = new URL(path, target.baseUrl);
  const abort = new AbortController();
  const stopOnCaller = () => abort.abort(opts.signal?.reason);
  if (opts.signal?.aborted) {
    stopOnCaller();
  }
  opts.signal?.addEventListener("abort", stopOnCaller, { once: true });
  let complete = false;
  try {
    if ((opts.transport ?? (underNode ? "node" : "fetch")) === "fetch") {
      const { streamFetch } = await import("./fetchstream.js");
      yield* streamFetch(target, path, input, opts.upload ?? "auto", abort.signal) as AsyncGenerator<unknown> as AsyncGenerator<Out>;
    } else {
      // Loaded only where it is used: a browser never meets node:http.
      const { sendNode } = await import("./nodehttp.js");
      const res = await sendNode(url, await target.token(), chunksOf(input), abort);
      if (res.status !== 200) {
        throw await res.refusal();
      }
      yield* linesOf<Out>(res.body);
    }
    complete = true;
  } finally {
    opts.signal?.removeEventListener("abort", stopOnCaller);
    if (!complete) {
      abort.abort(new Error("the caller stopped reading the stream"));
    }
  }
}
