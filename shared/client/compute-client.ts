import { RPC_ROUTES, type RpcName, type RpcRequest, type RpcResponse } from "../contract/index.js";
import { httpAnswerFacts, readEnvelope } from "./envelope.js";

export interface ComputeClientOptions {
  /** The gateway's base URL, e.g. `http://127.0.0.1:8080`. */
  baseUrl: string;
  /** Sent as `X-App-ID` on every call. */
  appId: string;
  /** An access token for `Authorization: Bearer`. */
  accessToken?: string;
  /** An API key for `X-API-Key` (used when no access token is set). */
  apiKey?: string;
  fetch?: typeof fetch;
}

/** A raw HTTP answer, for callers that need the status and headers too. */
export interface RawResponse {
  status: number;
  headers: Headers;
  body: unknown;
}

/**
 * A typed client of the HTTP API, driven by the same route table as the gateway.
 * Successful calls return the envelope's `payload`, checked against the route's schema;
 * failures throw the ApiError the answer carries (`readEnvelope`).
 */
export class ComputeClient {
  private readonly options: ComputeClientOptions;

  constructor(options: ComputeClientOptions) {
    this.options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
  }

  /** A client with other credentials against the same gateway and app. */
  with(credentials: { accessToken?: string; apiKey?: string; appId?: string }): ComputeClient {
    const { accessToken: _token, apiKey: _key, ...rest } = this.options;
    return new ComputeClient({ ...rest, ...credentials, appId: credentials.appId ?? this.options.appId });
  }

  async call<N extends RpcName>(name: N, body: RpcRequest<N>): Promise<RpcResponse<N>> {
    const route = RPC_ROUTES[name];
    const response = await this.raw(route.method, route.path, body);
    return route.response.parse(readEnvelope(response.body, httpAnswerFacts(response))) as RpcResponse<N>;
  }

  /** Sends any request with this client's headers; the body is JSON unless it is a string. */
  async raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
    const { baseUrl, appId, accessToken, apiKey } = this.options;
    const send = this.options.fetch ?? fetch;
    const response = await send(`${baseUrl}${path}`, {
      method,
      headers: {
        "x-app-id": appId,
        ...(accessToken ? { authorization: `Bearer ${accessToken}` } : apiKey ? { "x-api-key": apiKey } : {}),
        ...(body !== undefined && typeof body !== "string" ? { "content-type": "application/json" } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: the caller gets the text.
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }
}
