// The package as npm pack makes it, installed into a project of its own: require() and import
// both load it, and TypeScript finds its types from a CommonJS file (.cts) and an ES module
// (.mts) under NodeNext resolution.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtemp, mkdir, writeFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

test("npm pack: the package loads with require and import, with types", async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), "yardstick-client-"));
  t.after(() => rm(dir, { recursive: true, force: true }));
  // --ignore-scripts: the test runs on the build npm test follows (prepack would build again).
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], { cwd: here, encoding: "utf8" }));
  const files = packed.files.map((f) => f.path);
  for (const f of ["package.json", "dist/index.js", "dist/index.d.ts", "dist/cjs/index.js", "dist/cjs/index.d.ts", "dist/cjs/package.json"]) {
    assert.ok(files.includes(f), `${f} missing from the package: ${files.join(", ")}`);
  }
  assert.ok(!files.some((f) => f.startsWith("src/") || f.startsWith("test/")), `sources in the package: ${files.join(", ")}`);

  const app = path.join(dir, "app");
  const installed = path.join(app, "node_modules", "@yardstick", "client");
  await mkdir(installed, { recursive: true });
  execFileSync("tar", ["-xzf", path.join(dir, packed.filename), "-C", installed, "--strip-components=1"]);
  // Its one dependency, from this checkout's install, as npm would have installed it.
  await mkdir(path.join(app, "node_modules"), { recursive: true });
  execFileSync("cp", ["-r", path.join(here, "node_modules", "openapi-fetch"), path.join(app, "node_modules", "openapi-fetch")]);
  await writeFile(path.join(app, "package.json"), '{ "name": "app", "private": true }\n');
  await writeFile(path.join(app, "use.cts"), 'import y = require("@yardstick/client");\nconst c: y.ServiceClient<y.ScoringPaths> = y.createScoringClient({ baseUrl: "http://x", clientId: "a", clientSecret: "b" });\nexport const ok: boolean = typeof c.stream === "function";\n');
  await writeFile(path.join(app, "use.mts"), 'import { createYardstick, type ScoringComponents } from "@yardstick/client";\nconst m: ScoringComponents["schemas"]["Measure"] | undefined = undefined;\nexport const ok: boolean = typeof createYardstick === "function" && m === undefined;\n');
  await writeFile(path.join(app, "bad.mts"), 'import { createScoringClient } from "@yardstick/client";\ncreateScoringClient({ baseUrl: 1 });\n');
  const tsc = path.join(here, "node_modules", "typescript", "bin", "tsc");
  const opts = ["--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--skipLibCheck", "--target", "es2022", "--lib", "es2022,dom"];
  execFileSync(process.execPath, [tsc, ...opts, "use.cts", "use.mts"], { cwd: app, encoding: "utf8" });
  // The types are there to fail on: a wrong call does not compile.
  assert.throws(() => execFileSync(process.execPath, [tsc, ...opts, "bad.mts"], { cwd: app, encoding: "utf8", stdio: "pipe" }), (e) => /TS2322|TS2345|TS2739|TS2741/.test(e.stdout));

  const required = execFileSync(process.execPath, ["-e", 'const y = require("@yardstick/client"); console.log(typeof y.createYardstick, typeof y.YardstickError)'], { cwd: app, encoding: "utf8" });
  assert.equal(required.trim(), "function function");
  const imported = execFileSync(process.execPath, ["--input-type=module", "-e", 'import { createYardstick, YardstickError } from "@yardstick/client"; console.log(typeof createYardstick, typeof YardstickError)'], { cwd: app, encoding: "utf8" });
  assert.equal(imported.trim(), "function function");
});
