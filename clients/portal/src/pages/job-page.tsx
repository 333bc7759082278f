import { useState } from "preact/hooks";
import { isTerminal, type Artifact } from "../../../../shared/contract/index.js";
import { ErrorNote } from "../components/error-note.js";
import { LogPane } from "../components/log-pane.js";
import { StateBadge } from "../components/state-badge.js";
import { bytes, when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

const POLL_MS = 2000;

/** Saves a signed download through the browser's own download, so big files never sit in memory. */
function saveFrom(url: string, name: string): void {
  const anchor = document.createElement("a");
  anchor.href = url;
  anchor.download = name;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
}

export function JobPage(props: { jobId: string }) {
  const job = useLoad(() => api().jobs.retrieve(props.jobId), [props.jobId], {
    pollMs: POLL_MS,
    poll: (data) => data === undefined || !isTerminal(data.job.state),
  });
  const action = useAction();
  const current = job.data?.job;

  const act = (run: () => Promise<unknown>) =>
    void action.run(async () => {
      await run();
      await job.reload();
    });

  return (
    <main>
      <ErrorNote error={job.error} />
      {current === undefined ? (
        <p class="hint">Loading…</p>
      ) : (
        <>
          <div class="title-row">
            <h1>{current.name ?? current.job_id}</h1>
            <StateBadge state={current.state} />
          </div>
          <dl class="facts">
            <dt>Job id</dt>
            <dd>
              <code>{current.job_id}</code>
            </dd>
            <dt>Type</dt>
            <dd>{current.type}</dd>
            <dt>Command</dt>
            <dd>
              <code>{current.command.join(" ")}</code>
            </dd>
            <dt>Pool</dt>
            <dd>{current.pool_id}</dd>
            <dt>Attempt</dt>
            <dd>
              {current.attempt} of {current.max_attempts}
            </dd>
            {current.pending_reason ? (
              <>
                <dt>Waiting because</dt>
                <dd data-testid="pending-reason">{current.pending_reason.replaceAll("_", " ")}</dd>
              </>
            ) : null}
            {current.exit_code !== null ? (
              <>
                <dt>Exit code</dt>
                <dd>{current.exit_code}</dd>
              </>
            ) : null}
            {current.error ? (
              <>
                <dt>Error</dt>
                <dd>
                  {current.error.message} <code>{current.error.code}</code>
                </dd>
              </>
            ) : null}
          </dl>
          <div class="actions">
            <button
              type="button"
              disabled={action.busy || isTerminal(current.state)}
              onClick={() => act(() => api().jobs.cancel(current.job_id))}
            >
              Cancel job
            </button>
            <button
              type="button"
              disabled={action.busy || !(current.state === "failed" || current.state === "timed_out")}
              onClick={() => act(() => api().jobs.retry(current.job_id))}
            >
              Retry job
            </button>
          </div>
          <ErrorNote error={action.error} />
          <LogPane jobId={current.job_id} onEnd={() => void job.reload()} />
          <Artifacts jobId={current.job_id} artifacts={job.data?.artifacts ?? []} onUploaded={job.reload} />
          <section aria-label="Timeline">
            <h2>Timeline</h2>
            <ol class="timeline">
              {current.timeline.map((event) => (
                <li>
                  <time>{when(event.at)}</time> <StateBadge state={event.state} /> {event.reason.replaceAll("_", " ")}
                  {event.node_id ? ` on ${event.node_id}` : ""}
                  {event.exit_code !== null && event.exit_code !== undefined ? `, exit code ${event.exit_code}` : ""}
                  {event.error ? `: ${event.error.message}` : ""} <span class="hint">(attempt {event.attempt})</span>
                </li>
              ))}
            </ol>
          </section>
        </>
      )}
    </main>
  );
}

function Artifacts(props: { jobId: string; artifacts: Artifact[]; onUploaded: () => Promise<void> }) {
  const action = useAction();
  const [name, setName] = useState("");
  const [file, setFile] = useState<File>();

  const download = (artifact: Artifact) =>
    void action.run(async () => {
      const target = await api().call("presignDownload", { job_id: props.jobId, artifact_id: artifact.artifact_id });
      saveFrom(target.url, artifact.artifact_id);
    });

  const upload = (event: Event) => {
    event.preventDefault();
    if (file === undefined) return;
    const artifactId = name.trim() || file.name;
    void action.run(async () => {
      await api().artifacts.upload(props.jobId, artifactId, file, file.type ? { contentType: file.type } : {});
      setName("");
      setFile(undefined);
      (event.target as HTMLFormElement).reset();
      await props.onUploaded();
    });
  };

  return (
    <section aria-label="Artifacts">
      <h2>Artifacts</h2>
      {props.artifacts.length === 0 ? <p class="hint">None yet.</p> : null}
      <ul class="artifacts">
        {props.artifacts.map((artifact) => (
          <li>
            <button type="button" class="link" onClick={() => download(artifact)}>
              Download {artifact.artifact_id}
            </button>{" "}
            <span class="hint">
              {bytes(artifact.size_bytes)}, {artifact.content_type}, sha256 {artifact.sha256.slice(0, 12)}…
            </span>
          </li>
        ))}
      </ul>
      <form class="inline-form" onSubmit={upload} aria-label="Upload an artifact">
        <label>
          File
          <input type="file" name="file" required onChange={(e) => setFile(e.currentTarget.files?.[0])} />
        </label>
        <label>
          Artifact name
          <input
            name="artifact_id"
            value={name}
            placeholder="the file's name"
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </label>
        <button type="submit" disabled={action.busy}>
          Upload
        </button>
      </form>
      <ErrorNote error={action.error} />
    </section>
  );
}
