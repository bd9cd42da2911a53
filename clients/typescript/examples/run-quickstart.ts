// `npm run example`: the quickstart against `make run`'s services (127.0.0.1:8080 and :8081).
import { quickstart } from "./quickstart.js";

await quickstart();
