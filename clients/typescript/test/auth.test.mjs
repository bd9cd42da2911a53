// Token handling against the built services: one token per service, a refresh before expiresIn
// runs out, and a 401 that says the token was refused answered by logging in again and sending
// the call once more.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createScoringClient, createYardstick, TokenSource } from "../dist/index.js";
import { start } from "./live.mjs";

let scoring, forecast;
before(async () => {
  [scoring, forecast] = await Promise.all([start("scoring"), start("forecast")]);
});
after(async () => {
  await Promise.all([scoring?.stop(), forecast?.stop()]);
});

const demo = { clientId: "demo", clientSecret: "demo-secret" };
const measure = { body: { items: [{ id: "L000001", result: 1 }, { id: "L000002", result: 0 }] } };
const forecastBody = { body: { priorAbility: 640, priorUncertainty: 70, testUncertainty: 32.5, elapsedDays: 180, cutLevels: [500, 650, 800] } };

test("one token per service: each logs in at its own service once", async () => {
  const y = createYardstick({ scoring: scoring.base, forecast: forecast.base, ...demo });
  for (let i = 0; i < 3; i++) {
    const s = await y.scoring.POST("/api/score/items/idsWithResults/standard", measure);
    const f = await y.forecast.POST("/api/forecast/reading", forecastBody);
    assert.equal(s.response.status, 200, JSON.stringify(s.error));
    assert.equal(f.response.status, 200, JSON.stringify(f.error));
  }
  assert.equal(y.scoring.tokens.logins, 1);
  assert.equal(y.forecast.tokens.logins, 1);
  assert.notEqual(await y.scoring.tokens.token(), await y.forecast.tokens.token());
});

test("the token is renewed before expiresIn runs out, not after", async () => {
  let now = 1_000_000;
  const tokens = new TokenSource({ baseUrl: scoring.base, ...demo, now: () => now });
  const first = await tokens.token();
  // The dev token lives 86,400 s; renewed a minute early (a tenth of its life, at most 60 s).
  now += (86_400 - 61) * 1000;
  assert.equal(await tokens.token(), first, "kept while more than a minute is left");
  assert.equal(tokens.logins, 1);
  now += 2000;
  const second = await tokens.token();
  assert.equal(tokens.logins, 2, "renewed within the last minute");
  assert.notEqual(second, first);
});

test("concurrent calls share one login", async () => {
  const tokens = new TokenSource({ baseUrl: scoring.base, ...demo });
  const got = await Promise.all(Array.from({ length: 8 }, () => tokens.token()));
  assert.equal(new Set(got).size, 1);
  assert.equal(tokens.logins, 1);
});

test("a 401 invalid_token (the service restarted with a new key) logs in again and retries once", async () => {
  const client = createScoringClient({ baseUrl: scoring.base, ...demo });
  const before = await client.POST("/api/score/items/idsWithResults/standard", measure);
  assert.equal(before.response.status, 200);
  const old = await client.tokens.token();
  // A dev-mode service makes a new signing key each start: its old tokens are refused.
  scoring = await scoring.restart();
  const raw = await fetch(`${scoring.base}/api/score/items/idsWithResults/standard`, {
    method: "POST",
    headers: { Authorization: `Bearer ${old}`, "Content-Type": "application/json" },
    body: JSON.stringify(measure.body),
  });
  assert.equal(raw.status, 401);
  assert.match(raw.headers.get("WWW-Authenticate") ?? "", /error="invalid_token"/);
  const after = await client.POST("/api/score/items/idsWithResults/standard", measure);
  assert.equal(after.response.status, 200, JSON.stringify(after.error));
  assert.deepStrictEqual(after.data, before.data);
  assert.equal(client.tokens.logins, 2);
  assert.notEqual(await client.tokens.token(), old);
});

test("a 401 that a new token does not cure is answered, not retried forever", async () => {
  const client = createScoringClient({ baseUrl: scoring.base, ...demo });
  let calls = 0;
  const refused = createScoringClient({
    baseUrl: scoring.base,
    ...demo,
    // Every call leaves with a token cut short: the service refuses each.
    fetch: (req) => {
      calls++;
      if (req instanceof Request && req.headers.has("Authorization")) {
        const bad = new Request(req, { headers: new Headers(req.headers) });
        bad.headers.set("Authorization", req.headers.get("Authorization").slice(0, -4));
        return fetch(bad);
      }
      return fetch(req);
    },
  });
  const r = await refused.POST("/api/score/items/idsWithResults/standard", measure);
  assert.equal(r.response.status, 401);
  assert.equal(r.error.exceptionType, "NotAuthenticated");
  assert.match(r.error.additionalInfo, /could not be read/);
  assert.equal(calls, 4, "login, the call, the second login, the retry");
  assert.equal((await client.POST("/api/score/items/idsWithResults/standard", measure)).response.status, 200);
});
