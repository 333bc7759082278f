import { useState } from "preact/hooks";
import { SubmitJobRequest } from "../../../../shared/contract/index.js";
import { DryRunPanel, STUCK_REASONS, useDryRun } from "../components/dry-run-panel.js";
import { ErrorNote, Problems } from "../components/error-note.js";
import { EMPTY_JOB, JobFields, jobBodyOf } from "../components/job-fields.js";
import { problemsOf } from "../format.js";
import { navigate } from "../router.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

/**
 * The submit form. The draft is checked with the contract's own schema as it is typed,
 * and its dry run says where the job would run, what it would cost and why it would
 * wait. Submit asks the dry run of exactly what is sent: a refusal stops it, and a job
 * that no node would take asks for a second click ("Submit anyway").
 */
export function SubmitJobPage() {
  const [draft, setDraft] = useState(EMPTY_JOB);
  const [problems, setProblems] = useState<string[]>([]);
  const [confirmed, setConfirmed] = useState<string>();
  const action = useAction();
  const nodes = useLoad(() => api().nodes.list(), []);
  const parsed = SubmitJobRequest.omit({ dry_run: true }).safeParse(jobBodyOf(draft));
  const dryRun = useDryRun(parsed.success ? parsed.data : undefined);
  const key = parsed.success ? JSON.stringify(parsed.data) : "";
  const warned = confirmed !== undefined && confirmed === key;

  const submit = (event: Event) => {
    event.preventDefault();
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues));
      return;
    }
    setProblems([]);
    void action.run(async () => {
      const plan = await dryRun.checkNow();
      if (!plan.would_queue) return;
      const reason = plan.placement.pending_reason;
      if (reason !== null && STUCK_REASONS.has(reason) && !warned) {
        setConfirmed(key);
        return;
      }
      const queued = await api().jobs.submit(parsed.data);
      navigate(`/jobs/${queued.job_id}`);
    });
  };

  return (
    <main class="narrow">
      <h1>Submit a job</h1>
      <form class="stack" onSubmit={submit}>
        <JobFields draft={draft} onDraft={setDraft} nodes={nodes.data?.items ?? []} />
        <DryRunPanel dryRun={dryRun} job={parsed.success ? parsed.data : undefined} />
        <Problems problems={problems} />
        {warned ? (
          <p class="warning" role="alert">
            No node would take this job now (see above). Submit anyway to queue it until one does.
          </p>
        ) : null}
        <button type="submit" disabled={action.busy}>
          {warned ? "Submit anyway" : "Submit"}
        </button>
        <ErrorNote error={action.error} />
      </form>
    </main>
  );
}
