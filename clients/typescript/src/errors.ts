/** The body of every non-2xx answer of the services (docs/api.md, Errors). */
export interface ErrorBody {
  message: string;
  exceptionType: string;
  additionalInfo: string;
  validationErrors?: Record<string, string[]>;
}

/**
 * A call the service refused, or a stream it would not start: the status, the error body (as
 * parsed; null when the body was not JSON) and the 401's WWW-Authenticate challenge.
 */
export class YardstickError extends Error {
  readonly status: number;
  readonly body: ErrorBody | null;
  readonly challenge: string | null;

  constructor(status: number, body: ErrorBody | null, challenge: string | null, what: string) {
    super(`${what}: ${status} ${body ? `${body.exceptionType}: ${body.message} ${body.additionalInfo}` : "(no error body)"}`);
    this.name = "YardstickError";
    this.status = status;
    this.body = body;
    this.challenge = challenge;
  }

  /** Reads a refused answer into an error (the body is consumed). */
  static async from(res: Response, what: string): Promise<YardstickError> {
    const text = await res.text();
    let body: ErrorBody | null = null;
    try {
      body = JSON.parse(text) as ErrorBody;
    } catch {
      // not JSON: a proxy's page, say; the status says what it can
    }
    return new YardstickError(res.status, body, res.headers.get("WWW-Authenticate"), what);
  }
}
