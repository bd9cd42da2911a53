// The NDJSON streams through the client against the built scoring service: a 100,000-record
// batch answered in input order with the node process's memory bounded (nothing of the stream
// is held whole), and backpressure: a caller that stops reading answers stops the reading of
// its input.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import v8 from "node:v8";
import vm from "node:vm";
import { createScoringClient } from "../dist/index.js";
import { start } from "./live.mjs";

// gc: a full collection, so that what is measured is what is held, not garbage not yet freed.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");
const mib = (b) => (b / (1 << 20)).toFixed(1);
/** The bytes held after a full collection: heap, array buffers and external memory. */
function live() {
  gc();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers + m.external;
}

let scoring, client;
before(async () => {
  scoring = await start("scoring");
  client = createScoringClient({ baseUrl: scoring.base, clientId: "demo", clientSecret: "demo-secret" });
});
after(() => scoring?.stop());

const items = Array.from({ length: 48 }, (_, i) => ({ id: `L${String(i + 1).padStart(6, "0")}`, result: i % 3 === 0 ? 0 : 1 }));
const recordBytes = JSON.stringify({ id: "r99999", path: "/api/score/items/idsWithResults/standard", body: { items } }).length + 1;

/** n records of about 1.4 KiB each, made as they are read. */
function* records(n, made) {
  for (let i = 0; i < n; i++) {
    made.count = i + 1;
    yield { id: `r${i}`, path: "/api/score/items/idsWithResults/standard", body: { items } };
  }
}

test("100,000 records in input order, in bounded memory", async () => {
  const n = 100_000;
  const made = { count: 0 };
  gc();
  const base = process.memoryUsage().rss;
  let peak = base;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 20);
  const started = Date.now();
  let next = 0;
  let summary;
  let peakLive = 0;
  try {
    for await (const line of client.stream("/api/score/batch", records(n, made))) {
      if ("summary" in line) {
        summary = line.summary;
        continue;
      }
      assert.equal(line.id, `r${next}`, "answers in input order");
      assert.equal(line.status, 200, JSON.stringify(line));
      next++;
      if (next % 20_000 === 0) {
        peakLive = Math.max(peakLive, live());
      }
    }
  } finally {
    clearInterval(sampler);
  }
  peak = Math.max(peak, process.memoryUsage().rss);
  const seconds = (Date.now() - started) / 1000;
  const limit = v8.getHeapStatistics().heap_size_limit;
  console.log(
    `# heap limit ${mib(limit)} MiB; ${n} records (${mib(n * recordBytes)} MiB of body) in ${seconds.toFixed(1)} s (${Math.round(n / seconds)}/s); ` +
      `node RSS ${mib(base)} MiB before, peak ${mib(peak)} MiB (+${mib(peak - base)} MiB); live heap at most ${mib(peakLive)} MiB`,
  );
  assert.equal(next, n);
  assert.deepStrictEqual(summary, { records: n, ok: n, failed: 0 });
  // The body is about 1.4 KiB a record (136 MiB in all), the answers about 100 bytes a record
  // (10 MiB): a client that held the body whole, or a copy of the lines sent, would go past both
  // bounds (and past npm test's heap limit of 64 MiB, which keeps RSS near what is held rather
  // than what the collector has not yet freed).
  assert.ok(peakLive < 32 * (1 << 20), `live heap reached ${mib(peakLive)} MiB; want under 32 MiB`);
  assert.ok(peak - base < 128 * (1 << 20), `RSS grew ${mib(peak - base)} MiB; want under 128 MiB, less than the body`);
});

test("a caller that stops reading stops the reading of its input", async () => {
  const made = { count: 0 };
  const answers = client.stream("/api/score/batch", records(Number.MAX_SAFE_INTEGER, made));
  for (let i = 0; i < 10; i++) {
    const { value } = await answers.next();
    assert.equal(value.id, `r${i}`);
  }
  // The service goes on reading what is in flight for a while (longer on a loaded machine):
  // wait until the reading stops, for up to 15 s, then check it stays stopped.
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let stalled = -1;
  for (let waited = 0; waited < 15_000 && made.count !== stalled; waited += 500) {
    stalled = made.count;
    await sleep(500);
  }
  await sleep(1000);
  // The service holds a bounded number of records in flight and the sockets' buffers fill:
  // then the input is read no further.
  assert.equal(made.count, stalled, "records still read while no answer is taken");
  assert.ok(stalled < 200_000, `read ${stalled} records for 10 answers taken`);
  await answers.return(); // ends the stream: the input's generator is closed
  console.log(`# stopped reading after 10 answers: ${stalled} records read`);
});

test("a stream the service refuses before its first line is an error with the body", async () => {
  const bad = createScoringClient({ baseUrl: scoring.base, clientId: "demo", clientSecret: "wrong" });
  await assert.rejects(collect(bad.stream("/api/score/batch", [])), (e) => e.name === "YardstickError" && e.status === 401 && e.body.exceptionType === "NotAuthenticated");
});

async function collect(it) {
  const out = [];
  for await (const x of it) out.push(x);
  return out;
}

// The fetch transport, as browsers use it, here with Node's fetch: a streamed upload (a
// ReadableStream body, duplex "half") and the buffered one, each answering every record in
// order; a refusal thrown the same way.
for (const upload of ["stream", "buffer"]) {
  test(`fetch transport, upload ${upload}: a batch in input order`, async () => {
    const n = 2_000;
    const made = { count: 0 };
    const lines = await collect(client.stream("/api/score/batch", records(n, made), { transport: "fetch", upload }));
    assert.equal(lines.length, n + 1);
    lines.slice(0, n).forEach((line, i) => {
      assert.equal(line.id, `r${i}`, "answers in input order");
      assert.equal(line.status, 200, JSON.stringify(line));
    });
    assert.deepStrictEqual(lines[n], { summary: { records: n, ok: n, failed: 0 } });
  });
}

test("fetch transport: a refused stream is an error with the body", async () => {
  const bad = createScoringClient({ baseUrl: scoring.base, clientId: "demo", clientSecret: "wrong" });
  await assert.rejects(collect(bad.stream("/api/score/batch", [], { transport: "fetch" })), (e) => e.name === "YardstickError" && e.status === 401);
});

test("fetch transport: a caller that stops reading stops the reading of its input at the piece", async () => {
  const made = { count: 0 };
  const answers = client.stream("/api/score/batch", records(Number.MAX_SAFE_INTEGER, made), { transport: "fetch", upload: "buffer" });
  for (let i = 0; i < 10; i++) {
    const { value } = await answers.next();
    assert.equal(value.id, `r${i}`);
  }
  const read = made.count;
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(made.count, read, "records still read while no answer is taken");
  // One piece (256 KiB) and the chunk read past it: about 200 records of 1.4 KiB.
  const perPiece = Math.ceil((256 * 1024) / recordBytes);
  assert.ok(read <= perPiece + Math.ceil((64 * 1024) / recordBytes) + 1, `read ${read} records for 10 answers; want at most a piece and a chunk`);
  await answers.return();
  console.log(`# fetch: stopped reading after 10 answers: ${read} records read`);
});

test("fetch transport: a broken line keeps its number in the whole input across pieces", async () => {
  const n = 600; // about 3 pieces
  const input = Array.from(records(n, { count: 0 }));
  delete input[450].id; // not a record: answered by its line number
  const lines = await collect(client.stream("/api/score/batch", input, { transport: "fetch", upload: "buffer" }));
  const broken = lines.filter((l) => "line" in l);
  assert.deepStrictEqual(broken.map((l) => [l.line, l.status]), [[451, 400]]);
  assert.deepStrictEqual(lines.at(-1), { summary: { records: n, ok: n - 1, failed: 1 } });
});
