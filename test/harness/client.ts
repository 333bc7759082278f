import { ComputeJobsClient, type Credentials } from "../../clients/sdk/src/index.js";
import { ComputeClient as RawClient, type RawResponse } from "../../shared/client/index.js";
import { RPC_ROUTES, type RpcName, type RpcRequest, type RpcResponse } from "../../shared/contract/index.js";

export interface ComputeClientOptions {
  baseUrl: string;
  appId: string;
  accessToken?: string;
  apiKey?: string;
  /** Retries "try again later" answers (429, a 503 of a read) with the SDK's default policy; off unless asked. */
  patient?: boolean;
}

export type { RawResponse };

/**
 * The tests' client: the SDK (clients/sdk), with its retries off so that a test sees each
 * refusal as the service sent it, and every payload checked against the contract's
 * response schema; plus `raw` for requests no client would send.
 */
export class ComputeClient {
  private readonly sdk: ComputeJobsClient;

  constructor(private readonly options: ComputeClientOptions) {
    const credentials: Credentials | undefined = options.accessToken
      ? { accessToken: options.accessToken }
      : options.apiKey
        ? { apiKey: options.apiKey }
        : undefined;
    this.sdk = new ComputeJobsClient({
      baseUrl: options.baseUrl,
      appId: options.appId,
      credentials,
      retry: options.patient ? {} : { maxRetries: 0 },
      userAgent: "tests",
    });
  }

  /** A client with other credentials against the same gateway and app. */
  with(credentials: { accessToken?: string; apiKey?: string; appId?: string }): ComputeClient {
    return new ComputeClient({
      baseUrl: this.options.baseUrl,
      appId: credentials.appId ?? this.options.appId,
      ...credentials,
    });
  }

  /** One operation through the SDK; the payload is parsed with the route's schema, so an answer off the contract fails the test. */
  async call<N extends RpcName>(name: N, body: RpcRequest<N>): Promise<RpcResponse<N>> {
    return RPC_ROUTES[name].response.parse(await this.sdk.call(name, body)) as RpcResponse<N>;
  }

  /** The same client retrying "try again later" as the SDK does by default (a test reading the outcome after a fault). */
  patient(): ComputeClient {
    return new ComputeClient({ ...this.options, patient: true });
  }

  /** Sends any request with this client's headers, as it is (the small client the agent uses does the sending). */
  raw(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawResponse> {
    return new RawClient(this.options).raw(method, path, body, headers);
  }
}
