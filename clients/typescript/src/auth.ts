import createClient from "openapi-fetch";
import type { paths as ScoringPaths } from "./gen/scoring.js";
import { YardstickError, type ErrorBody } from "./errors.js";

/** What a TokenSource needs: the service's base URL and a client's credentials. */
export interface TokenSourceOptions {
  /** The service that issues and accepts the token, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** The fetch to use (default: the global one). */
  fetch?: typeof fetch;
  /** The clock, in milliseconds (default Date.now); tests move it. */
  now?: () => number;
}

/**
 * The access token of one service for one client. A token is good on the service that issued
 * it only, so each service has its own source. token() logs in (POST /authToken) the first
 * time and again before the token's expiresIn runs out: a tenth of its lifetime early, at most
 * a minute, so a call never leaves with a token about to expire. Concurrent callers share one
 * login.
 */
export class TokenSource {
  readonly #opts: TokenSourceOptions;
  readonly #login;
  readonly #now: () => number;
  #token: string | undefined;
  #refreshAt = 0;
  #pending: Promise<string> | undefined;
  /** How many logins this source has made (a refresh is one). */
  logins = 0;

  constructor(opts: TokenSourceOptions) {
    this.#opts = opts;
    this.#now = opts.now ?? Date.now;
    // Typed against the contract: /authToken is the same on both services.
    this.#login = createClient<ScoringPaths>({ baseUrl: opts.baseUrl, fetch: opts.fetch });
  }

  /** A token that is good now: the one held, or a new one. */
  async token(): Promise<string> {
    if (this.#token !== undefined && this.#now() < this.#refreshAt) {
      return this.#token;
    }
    this.#pending ??= this.#fetchToken().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /**
   * Drops token if it is the one held (a service refused it), so that the next token() logs in
   * again; a newer token, got meanwhile by another call, is kept.
   */
  invalidate(token: string): void {
    if (this.#token === token) {
      this.#token = undefined;
    }
  }

  async #fetchToken(): Promise<string> {
    const { clientId, clientSecret } = this.#opts;
    const { data, error, response } = await this.#login.POST("/authToken", { body: { clientId, clientSecret } });
    if (error !== undefined || data === undefined || !("accessToken" in data)) {
      throw new YardstickError(response.status, (error as ErrorBody | undefined) ?? null, response.headers.get("WWW-Authenticate"), "POST /authToken");
    }
    this.logins++;
    const lifetime = data.expiresIn * 1000;
    this.#token = data.accessToken;
    this.#refreshAt = this.#now() + lifetime - Math.min(60_000, lifetime / 10);
    return data.accessToken;
  }
}
