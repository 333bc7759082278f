import { useState } from "preact/hooks";
import { SubmitJobRequest } from "../../../../shared/contract/index.js";
import { ErrorNote } from "../components/error-note.js";
import { optionalNumber, pairs } from "../format.js";
import { navigate } from "../router.js";
import { api } from "../session.js";
import { useAction } from "../use-async.js";

/** The form's fields, as typed. */
interface Draft {
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
}

const EMPTY: Draft = {
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
};

/** The request the draft describes, checked with the contract's own schema before it is sent. */
function requestOf(draft: Draft) {
  return SubmitJobRequest.safeParse({
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
  });
}

export function SubmitJobPage() {
  const [draft, setDraft] = useState(EMPTY);
  const [problems, setProblems] = useState<string[]>([]);
  const action = useAction();
  const field = (key: keyof Draft) => ({
    name: key,
    value: draft[key],
    onInput: (event: Event) => setDraft({ ...draft, [key]: (event.currentTarget as HTMLInputElement).value }),
  });

  const submit = (event: Event) => {
    event.preventDefault();
    const parsed = requestOf(draft);
    if (!parsed.success) {
      setProblems(parsed.error.issues.map((issue) => `${issue.path.join(".") || "request"}: ${issue.message}`));
      return;
    }
    setProblems([]);
    void action.run(async () => {
      const queued = await api().jobs.submit(parsed.data);
      navigate(`/jobs/${queued.job_id}`);
    });
  };

  return (
    <main class="narrow">
      <h1>Submit a job</h1>
      <form class="stack" onSubmit={submit}>
        <label>
          Name (optional)
          <input {...field("name")} />
        </label>
        <label>
          Type
          <input {...field("type")} required />
        </label>
        <label>
          Command, one argument per line
          <textarea {...field("command")} rows={4} required placeholder={"sh\n-c\necho hello"} />
        </label>
        <div class="grid">
          <label>
            Pool
            <input {...field("pool_id")} />
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
        <label>
          Environment, KEY=value per line
          <textarea {...field("env")} rows={3} />
        </label>
        <label>
          Labels, key=value per line
          <textarea {...field("labels")} rows={2} />
        </label>
        {problems.length > 0 ? (
          <ul class="error" role="alert">
            {problems.map((problem) => (
              <li>{problem}</li>
            ))}
          </ul>
        ) : null}
        <button type="submit" disabled={action.busy}>
          Submit
        </button>
        <ErrorNote error={action.error} />
      </form>
    </main>
  );
}
