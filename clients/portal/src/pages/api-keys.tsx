import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import {
  API_KEY_SCOPES,
  CreateApiKeyRequest,
  type CreateApiKeyResponse,
  type Scope,
} from "../../../../shared/contract/index.js";
import { ErrorNote, Problems } from "../components/error-note.js";
import { SecretOnce } from "../components/secret-once.js";
import { credits, optionalNumber, problemsOf, when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";
import { TextField } from "../components/text-field.js";

/** API key settings: mint a key with its limits (the secret is shown once), list, revoke. */
export function ApiKeysPage() {
  const keys = useLoad(() => api().keys.list(), []);
  const [minted, setMinted] = useState<CreateApiKeyResponse>();
  const action = useAction(() => keys.reload());
  const revoke = (keyId: string) => action.act(() => api().keys.revoke(keyId));

  return (
    <main>
      <h1>API keys</h1>
      {minted ? (
        <SecretOnce label={`New key “${minted.name}”`} secret={minted.key} onDone={() => setMinted(undefined)} />
      ) : null}
      <h2>Your keys</h2>
      <ErrorNote error={keys.error ?? action.error} />
      <CardTable columns={["Name", "Key", "Scopes", "Expires", "Last used", "Spent / budget this month"]} actions>
        {keys.data?.items.map((key) => (
          <tr data-key-id={key.key_id}>
            <td data-label="Name">{key.name}</td>
            <td data-label="Key">
              <code>…{key.hint}</code>
            </td>
            <td data-label="Scopes">{key.scopes?.join(", ") ?? "all"}</td>
            <td data-label="Expires">{key.expires_at ? when(key.expires_at) : "never"}</td>
            <td data-label="Last used">
              {when(key.last_used_at)}
              {key.last_used_ip ? <span class="hint"> from {key.last_used_ip}</span> : null}
            </td>
            <td data-label="Spent / budget">
              {credits(key.spent_credits_this_month)} /{" "}
              {key.budget_credits_per_month === null ? "none" : credits(key.budget_credits_per_month)}
            </td>
            <td>
              {key.revoked_at ? (
                <span class="badge state-cancelled">revoked</span>
              ) : (
                <button
                  type="button"
                  class="danger"
                  disabled={action.busy}
                  onClick={() => revoke(key.key_id)}
                  aria-label={`Revoke ${key.name}`}
                >
                  Revoke
                </button>
              )}
            </td>
          </tr>
        ))}
      </CardTable>
      <CreateKeyForm
        onCreated={async (key) => {
          setMinted(key);
          await keys.reload();
        }}
      />
    </main>
  );
}

/** The scopes a new key may be limited to, one box each; none ticked means every scope. */
function ScopeChecks(props: { ticked: readonly Scope[]; onToggle: (scope: Scope) => void }) {
  return (
    <fieldset>
      <legend>Scopes (none ticked: every scope)</legend>
      <div class="checks">
        {API_KEY_SCOPES.map((scope) => (
          <label class="check">
            <input type="checkbox" checked={props.ticked.includes(scope)} onChange={() => props.onToggle(scope)} />{" "}
            {scope}
          </label>
        ))}
      </div>
    </fieldset>
  );
}

function CreateKeyForm(props: { onCreated: (key: CreateApiKeyResponse) => Promise<void> }) {
  const [name, setName] = useState("");
  const [perHour, setPerHour] = useState("");
  const [concurrent, setConcurrent] = useState("");
  const [types, setTypes] = useState("");
  const [scopes, setScopes] = useState<Scope[]>([]);
  const [expires, setExpires] = useState("");
  const [budget, setBudget] = useState("");
  const [problems, setProblems] = useState<string[]>([]);
  const action = useAction();

  const toggle = (scope: Scope) =>
    setScopes(scopes.includes(scope) ? scopes.filter((held) => held !== scope) : [...scopes, scope]);

  const submit = (event: Event) => {
    event.preventDefault();
    const allowed = types
      .split(",")
      .map((type) => type.trim())
      .filter(Boolean);
    const parsed = CreateApiKeyRequest.safeParse({
      name,
      ...(perHour ? { maxJobsPerHour: optionalNumber(perHour) } : {}),
      ...(concurrent ? { maxConcurrentJobs: optionalNumber(concurrent) } : {}),
      ...(allowed.length > 0 ? { allowedJobTypes: allowed } : {}),
      ...(scopes.length > 0 ? { scopes } : {}),
      ...(expires ? { expires_at: new Date(expires).toISOString() } : {}),
      ...(budget ? { budget_credits_per_month: optionalNumber(budget) } : {}),
    });
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues));
      return;
    }
    setProblems([]);
    void action.run(async () => {
      await props.onCreated(await api().keys.create(parsed.data));
      setName("");
    });
  };

  return (
    <form class="stack card" onSubmit={submit} aria-label="Create an API key">
      <h2>Create a key</h2>
      <TextField label="Name" name="name" required value={name} onValue={setName} />
      <div class="grid">
        <TextField
          label="Jobs per hour"
          name="maxJobsPerHour"
          inputMode="numeric"
          placeholder="no limit"
          value={perHour}
          onValue={setPerHour}
        />
        <TextField
          label="Concurrent jobs"
          name="maxConcurrentJobs"
          inputMode="numeric"
          placeholder="no limit"
          value={concurrent}
          onValue={setConcurrent}
        />
        <TextField
          label="Job types (comma-separated)"
          name="allowedJobTypes"
          placeholder="any"
          value={types}
          onValue={setTypes}
        />
        <label>
          Expires
          <input
            name="expires_at"
            type="datetime-local"
            value={expires}
            onInput={(e) => setExpires(e.currentTarget.value)}
          />
        </label>
        <TextField
          label="Monthly budget (credits)"
          name="budget"
          inputMode="decimal"
          placeholder="none"
          value={budget}
          onValue={setBudget}
        />
      </div>
      <ScopeChecks ticked={scopes} onToggle={toggle} />
      <Problems problems={problems} />
      <button type="submit" disabled={action.busy}>
        Create key
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
