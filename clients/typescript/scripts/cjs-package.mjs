// Marks dist/cjs as CommonJS: the package is "type": "module", so without this Node would read
// the CommonJS build's .js files (and TypeScript its .d.ts files) as ES modules.
import { writeFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";

await writeFile(fileURLToPath(new URL("../dist/cjs/package.json", import.meta.url)), '{ "type": "commonjs" }\n');
