import type { NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, ensureBuckets, JsonBucket, type TopologyOptions } from "../../../shared/nats/index.js";
import { SigningKeyRecord, UrlSigningKeyRecord } from "../secrets/key-records.js";
import {
  ApiKeyOwnerRecord,
  ApiKeyRecord,
  AppRecord,
  BusinessRecord,
  BusinessUserRecord,
  LoginGuardRecord,
  OtpRecord,
  SessionRecord,
  UserEmailRecord,
  UserRecord,
} from "./records.js";

/** The identity buckets the gateway owns, each typed by its record schema. */
export async function openIdentityStore(nc: NatsConnection, topology: TopologyOptions) {
  const kv = await ensureBuckets(
    nc,
    [
      BUCKETS.apps,
      BUCKETS.businesses,
      BUCKETS.users,
      BUCKETS.businessUsers,
      BUCKETS.userEmails,
      BUCKETS.apiKeys,
      BUCKETS.apiKeyOwners,
      BUCKETS.sessions,
      BUCKETS.otpCodes,
      BUCKETS.loginGuards,
      BUCKETS.signingKeys,
    ],
    topology,
  );
  return {
    apps: new JsonBucket(kv[BUCKETS.apps], AppRecord),
    businesses: new JsonBucket(kv[BUCKETS.businesses], BusinessRecord),
    users: new JsonBucket(kv[BUCKETS.users], UserRecord),
    businessUsers: new JsonBucket(kv[BUCKETS.businessUsers], BusinessUserRecord),
    userEmails: new JsonBucket(kv[BUCKETS.userEmails], UserEmailRecord),
    apiKeys: new JsonBucket(kv[BUCKETS.apiKeys], ApiKeyRecord),
    apiKeyOwners: new JsonBucket(kv[BUCKETS.apiKeyOwners], ApiKeyOwnerRecord),
    sessions: new JsonBucket(kv[BUCKETS.sessions], SessionRecord),
    otpCodes: new JsonBucket(kv[BUCKETS.otpCodes], OtpRecord),
    loginGuards: new JsonBucket(kv[BUCKETS.loginGuards], LoginGuardRecord),
    signingKeys: new JsonBucket(kv[BUCKETS.signingKeys], SigningKeyRecord),
    urlSigningKeys: new JsonBucket(kv[BUCKETS.signingKeys], UrlSigningKeyRecord),
  };
}

export type IdentityStore = Awaited<ReturnType<typeof openIdentityStore>>;
