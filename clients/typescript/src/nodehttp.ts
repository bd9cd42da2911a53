import http from "node:http";
import https from "node:https";
import { once } from "node:events";
import { YardstickError } from "./errors.js";
import { ndjson, type Answer } from "./ndjson.js";

/**
 * sendNode sends a stream's request with node:http on a connection of its own (agent: false,
 * closed with the stream): the body is written as the socket drains, and a request that ends
 * (answered early, aborted) stops it and closes the input.
 */
export function sendNode(url: URL, token: string, input: AsyncGenerator<string>, abort: AbortController): Promise<Answer> {
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
  const sent = (async () => {
    for await (const chunk of input) {
      if (!req.write(chunk)) {
        await once(req, "drain", { signal: abort.signal });
      }
    }
    req.end();
  })();
  sent.catch(() => {}); // its failure is the request's, reported by answered or the answer
  return answered.then((res) => ({ status: res.statusCode ?? 0, body: res, refusal: () => refusal(res, url.pathname) }));
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
