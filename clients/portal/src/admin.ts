import { useEffect, useState } from "preact/hooks";
import { ApiError, type ComputeJobsClient } from "../../sdk/src/index.js";
import { api } from "./session.js";

/** Per session: whether its user is a business admin (asked once; the service decides every call anyway). */
const asked = new WeakMap<ComputeJobsClient, Promise<boolean>>();

/**
 * Whether the signed-in user may manage users and export, so the portal shows those only
 * to admins. A business admin may list users and nobody else may: one small call per
 * session says which (undefined until it answers). A failure other than a refusal is
 * asked again next time.
 */
export function useIsAdmin(): boolean | undefined {
  const client = api();
  const [admin, setAdmin] = useState<boolean>();
  useEffect(() => {
    let answer = asked.get(client);
    if (answer === undefined) {
      answer = client.users.list({ limit: 1 }).then(
        () => true,
        (error: unknown) => {
          if (!(error instanceof ApiError && error.status === 403)) asked.delete(client);
          return false;
        },
      );
      asked.set(client, answer);
    }
    let current = true;
    void answer.then((value) => current && setAdmin(value));
    return () => {
      current = false;
    };
  }, [client]);
  return admin;
}
