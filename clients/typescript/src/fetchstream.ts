import { YardstickError } from "./errors.js";
import { chunksOf, linesOf, ndjson, type StreamTarget } from "./ndjson.js";

/**
 * The largest piece of a batch sent in one fetch. fetch is half duplex (browsers, and Node's
 * undici, read an answer only once its request is sent), while the service answers as it reads
 * and stops reading when its answers are not taken: a body sent whole would stall once its
 * answers filled the connection's buffers. A piece's answers fit them.
 */
export const pieceBytes = 256 * 1024;

/**
 * Whether this fetch can send a ReadableStream body: a Request that reads the duplex option,
 * and does not turn the stream into text (which would set a text Content-Type), can.
 */
function takesStreams(): boolean {
  let duplex = false;
  try {
    const typed = new Request("https://example.invalid", {
      method: "POST",
      body: new ReadableStream(),
      get duplex() {
        duplex = true;
        return "half";
      },
    } as RequestInit).headers.has("Content-Type");
    return duplex && !typed;
  } catch {
    return false;
  }
}

/** What the pieces' merge reads of an answer line; the rest passes as it is. */
export interface BatchLine {
  line?: number;
  summary?: { records: number; ok: number; failed: number };
}

/**
 * streamFetch runs a stream with fetch. A batch goes as consecutive requests of at most
 * pieceBytes of lines each, every piece's answers yielded as they arrive before the next piece
 * is read from the input; their lines are numbered, and their summaries added up into one, as
 * one request's would be. A group stream's input (its settings, then students) cannot be split:
 * it is sent whole. Each request's body is a ReadableStream where the upload option allows it,
 * else a Blob.
 */
export async function* streamFetch<In>(target: StreamTarget, path: string, input: AsyncIterable<In> | Iterable<In>,
  upload: "auto" | "stream" | "buffer", signal: AbortSignal): AsyncGenerator<BatchLine> {
  const url = new URL(path, target.baseUrl);
  const streamed = upload === "stream" || (upload === "auto" && url.protocol === "https:" && takesStreams());
  const whole = path.endsWith("/stream"); // the group streams
  const chunks = chunksOf(input);
  const total = { records: 0, ok: 0, failed: 0 };
  let linesBefore = 0;
  try {
    // At least one request, an empty one for an empty input: a refusal is the caller's to learn.
    let next = await chunks.next();
    do {
      const piece: string[] = [];
      let bytes = 0;
      while (!next.done && (whole || piece.length === 0 || bytes + next.value.length <= pieceBytes)) {
        piece.push(next.value);
        bytes += next.value.length;
        next = await chunks.next();
      }
      let summary: BatchLine["summary"];
      for await (const line of send<BatchLine>(target, url, piece, streamed, signal)) {
        if (whole) {
          yield line;
        } else if (line.summary !== undefined) {
          summary = line.summary;
        } else {
          if (line.line !== undefined) line.line += linesBefore;
          yield line;
        }
      }
      if (whole) return;
      if (summary === undefined) return; // cut short: no summary, as one request's would end
      total.records += summary.records;
      total.ok += summary.ok;
      total.failed += summary.failed;
      for (const c of piece) linesBefore += c.split("\n").length - 1;
    } while (!next.done);
    if (!whole) {
      yield { summary: total };
    }
  } finally {
    await chunks.return(undefined);
  }
}

/** send posts one request of the given chunks and yields its answer's lines. */
async function* send<Out>(target: StreamTarget, url: URL, chunks: string[], streamed: boolean, signal: AbortSignal): AsyncGenerator<Out> {
  let body: BodyInit;
  if (streamed) {
    const encoder = new TextEncoder();
    let i = 0;
    body = new ReadableStream<Uint8Array>({
      pull(controller) {
        const c = chunks[i++];
        if (c === undefined) controller.close();
        else controller.enqueue(encoder.encode(c));
      },
    });
  } else {
    body = new Blob(chunks, { type: ndjson });
  }
  const headers = { "Content-Type": ndjson, Accept: ndjson, Authorization: `Bearer ${await target.token()}` };
  const fetchImpl = target.fetch; // called bare: a browser's fetch refuses any other this than the window
  const res = await fetchImpl(url, { method: "POST", headers, body, signal, ...(streamed ? { duplex: "half" } : {}) } as RequestInit);
  if (res.status !== 200) {
    throw await YardstickError.from(res, `POST ${url.pathname}`);
  }
  yield* linesOf<Out>(chunksOfBody(res.body));
}

/** The chunks of a fetch answer's body (a ReadableStream is not async-iterable in every browser). */
async function* chunksOfBody(body: ReadableStream<Uint8Array> | null): AsyncGenerator<Uint8Array> {
  if (body === null) return;
  const reader = body.getReader();
  let done = false;
  try {
    while (!done) {
      const next = await reader.read();
      done = next.done;
      if (!next.done) yield next.value;
    }
  } finally {
    if (!done) await reader.cancel().catch(() => {}); // the caller left: the answer is not read further
  }
}
