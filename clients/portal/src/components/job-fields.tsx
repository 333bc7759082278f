import type { NodeSummary } from "../../../../shared/contract/index.js";
import { optionalNumber, pairs } from "../format.js";

/** A job's fields as typed in a form (the submit page, a schedule's job). */
export interface JobDraft {
  name: string;
  type: string;
  command: string;
  pool_id: string;
  cpu: string;
  memory_mb: string;
  gpu: string;
  timeout_seconds: string;
  priority: string;
  env: string;
  labels: string;
  metadata: string;
}

export const EMPTY_JOB: JobDraft = {
  name: "",
  type: "shell",
  command: "",
  pool_id: "default",
  cpu: "1",
  memory_mb: "512",
  gpu: "0",
  timeout_seconds: "3600",
  priority: "0",
  env: "",
  labels: "",
  metadata: "",
};

/** The job the draft describes, as a submit's body (the contract's schemas check it). */
export function jobBodyOf(draft: JobDraft) {
  return {
    type: draft.type.trim(),
    command: draft.command.split("\n").filter((arg) => arg !== ""),
    ...(draft.name.trim() ? { name: draft.name.trim() } : {}),
    pool_id: draft.pool_id.trim(),
    resources: {
      cpu: optionalNumber(draft.cpu),
      memory_mb: optionalNumber(draft.memory_mb),
      gpu: optionalNumber(draft.gpu),
    },
    timeout_seconds: optionalNumber(draft.timeout_seconds),
    priority: optionalNumber(draft.priority),
    env: pairs(draft.env),
    labels: pairs(draft.labels),
    metadata: pairs(draft.metadata),
  };
}

/** The labels the business's own nodes of a pool carry, each with how many nodes carry it. */
function poolLabels(nodes: readonly NodeSummary[], poolId: string): string[] {
  const counts = new Map<string, number>();
  for (const node of nodes) {
    if (node.pool_id !== poolId || node.state === "offline") continue;
    for (const [key, value] of Object.entries(node.labels))
      counts.set(`${key}=${value}`, (counts.get(`${key}=${value}`) ?? 0) + 1);
  }
  return [...counts].map(([label, count]) => `${label} (${count} node${count === 1 ? "" : "s"})`);
}

/**
 * The fields of a job, each saying what it does: labels choose nodes (a label no node of
 * the pool carries makes the job wait), metadata are the team's own notes and choose
 * nothing. `nodes`: the business's own nodes, to list the pools and labels there are.
 */
export function JobFields(props: {
  draft: JobDraft;
  onDraft: (draft: JobDraft) => void;
  nodes: readonly NodeSummary[];
}) {
  const { draft } = props;
  const field = (key: keyof JobDraft) => ({
    name: key,
    value: draft[key],
    onInput: (event: Event) => props.onDraft({ ...draft, [key]: (event.currentTarget as HTMLInputElement).value }),
  });
  const pools = [...new Set(["default", ...props.nodes.map((node) => node.pool_id)])];
  const known = poolLabels(props.nodes, draft.pool_id.trim());
  return (
    <>
      <label>
        Name (optional)
        <input {...field("name")} />
      </label>
      <div class="field">
        <label>
          Type
          <input {...field("type")} required aria-describedby="type-help" />
        </label>
        <p class="hint" id="type-help">
          The kind of job; it runs only on a node that lists this type (agents run <code>shell</code>).
        </p>
      </div>
      <label>
        Command, one argument per line
        <textarea {...field("command")} rows={4} required placeholder={"sh\n-c\necho hello"} />
      </label>
      <div class="grid">
        <label>
          Pool
          <input {...field("pool_id")} list="pools" />
          <datalist id="pools">
            {pools.map((pool) => (
              <option value={pool} />
            ))}
          </datalist>
        </label>
        <label>
          CPU
          <input {...field("cpu")} inputMode="decimal" />
        </label>
        <label>
          Memory (MB)
          <input {...field("memory_mb")} inputMode="numeric" />
        </label>
        <label>
          GPU
          <input {...field("gpu")} inputMode="numeric" />
        </label>
        <label>
          Timeout (seconds)
          <input {...field("timeout_seconds")} inputMode="numeric" />
        </label>
        <label>
          Priority
          <input {...field("priority")} inputMode="numeric" />
        </label>
      </div>
      <div class="field">
        <label>
          Environment, KEY=value per line
          <textarea {...field("env")} rows={3} aria-describedby="env-help" />
        </label>
        <p class="hint" id="env-help">
          Given to the command. Not a secret store: everyone in the business can read it.
        </p>
      </div>
      <div class="field">
        <label>
          Labels (node selectors), key=value per line
          <textarea {...field("labels")} rows={2} aria-describedby="labels-help" />
        </label>
        <p class="hint" id="labels-help">
          Labels choose the node: the job runs only on a node of its pool that carries every label here, with the same
          value. A label no node carries makes the job wait for good. Leave empty to run on any node of the pool.
          {known.length > 0 ? ` Nodes of ${draft.pool_id.trim()} carry: ${known.join(", ")}.` : ""}
        </p>
      </div>
      <div class="field">
        <label>
          Metadata, key=value per line
          <textarea {...field("metadata")} rows={2} aria-describedby="metadata-help" />
        </label>
        <p class="hint" id="metadata-help">
          Your own notes on the job (a ticket, a commit, a team), kept and shown as they are. They choose no node; find
          jobs by them in the jobs list.
        </p>
      </div>
    </>
  );
}
