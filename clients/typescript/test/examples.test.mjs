// Every example of docs/examples.md, sent through the client to the built services: each
// answer must be the one the file shows (status and JSON value; <version> is the build's
// apiVersion, <ACCESS_TOKEN> a token, <PAGE_TOKEN> a catalog page token, signed with a key of
// the process). JSON paths go through the typed calls, the NDJSON ones
// through stream(), /authToken's form bodies through the typed call with a form serializer.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createYardstick } from "../dist/index.js";
import { start, repoRoot } from "./live.mjs";

/** The examples of the file: title, service, path, content type, auth, body, status, answer. */
export function parseExamples(md) {
  const out = [];
  const re = /^### (.+)\n\n```sh\n([\s\S]*?)\n```\n\nResponse `(\d+)`:\n\n```json\n([\s\S]*?)\n```/gm;
  for (const m of md.matchAll(re)) {
    const [, title, sh, status, answer] = m;
    const call = /curl -s -X POST "\$(SCORING|FORECAST)(\/[^"]*)"/.exec(sh);
    const body = /-d '([\s\S]*)'$/.exec(sh);
    assert.ok(call && body, `example ${title}: cannot read its command:\n${sh}`);
    out.push({
      title,
      service: call[1].toLowerCase(),
      path: call[2],
      contentType: /-H 'Content-Type: ([^']+)'/.exec(sh)?.[1] ?? "application/json",
      auth: sh.includes("Authorization: Bearer"),
      body: body[1],
      status: Number(status),
      answer,
    });
  }
  return out;
}

let services, client;
before(async () => {
  services = { scoring: await start("scoring"), forecast: await start("forecast") };
  client = createYardstick({ scoring: services.scoring.base, forecast: services.forecast.base, clientId: "demo", clientSecret: "demo-secret" });
});
after(async () => {
  await Promise.all(Object.values(services ?? {}).map((s) => s.stop()));
});

/** Replaces the file's placeholders in want by what got has there. */
function placeholders(want, got) {
  if (want === "<ACCESS_TOKEN>") {
    assert.match(String(got), /^ey[\w-]+\.[\w-]+\.[\w-]+$/, "an access token");
    return got;
  }
  if (want === "<PAGE_TOKEN>") {
    assert.match(String(got), /^[\w-]+$/, "a page token (base64url)");
    return got;
  }
  if (want === "<version>") {
    assert.equal(typeof got, "string");
    return got;
  }
  if (Array.isArray(want)) return want.map((w, i) => placeholders(w, got?.[i]));
  if (want && typeof want === "object") return Object.fromEntries(Object.entries(want).map(([k, w]) => [k, placeholders(w, got?.[k])]));
  return want;
}

async function collect(iterable) {
  const out = [];
  for await (const line of iterable) out.push(line);
  return out;
}

const md = await readFile(path.join(repoRoot, "docs/examples.md"), "utf8");
const examples = parseExamples(md);

test("the file has every example", () => {
  // 29 before the catalog; a new example is picked up by the parser, never skipped.
  assert.ok(examples.length >= 29, `read ${examples.length} examples`);
  assert.equal(examples.length, (md.match(/^Response `\d+`:/gm) ?? []).length, "every response belongs to an example read");
});

for (const ex of examples) {
  test(`${ex.title}`, async () => {
    const c = client[ex.service];
    let status, got;
    if (ex.contentType === "application/x-ndjson") {
      const lines = ex.body.split("\n").map((l) => JSON.parse(l));
      status = 200;
      got = await collect(c.stream(ex.path, lines));
    } else if (ex.contentType === "application/x-www-form-urlencoded") {
      const form = Object.fromEntries(new URLSearchParams(ex.body));
      const r = await c.POST(ex.path, {
        body: form,
        bodySerializer: (b) => new URLSearchParams(b).toString(),
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
      });
      status = r.response.status;
      got = r.data ?? r.error;
    } else {
      assert.equal(ex.auth, ex.path !== "/authToken", "a token on every path but /authToken");
      const r = await c.POST(ex.path, { body: JSON.parse(ex.body) });
      status = r.response.status;
      got = r.data ?? r.error;
    }
    assert.equal(status, ex.status);
    const want = ex.contentType === "application/x-ndjson" ? ex.answer.split("\n").map((l) => JSON.parse(l)) : JSON.parse(ex.answer);
    assert.deepStrictEqual(got, placeholders(want, got));
  });
}
