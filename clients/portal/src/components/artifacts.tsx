import { useState } from "preact/hooks";
import type { Artifact } from "../../../../shared/contract/index.js";
import { bytes } from "../format.js";
import { api } from "../session.js";
import { useAction } from "../use-async.js";
import { ConfirmButton } from "./confirm-button.js";
import { saveFrom } from "./download.js";
import { ErrorNote } from "./error-note.js";

/** A job's artifacts: each downloaded through a signed URL (big files never sit in the page's memory), or deleted; an upload form. */
export function Artifacts(props: { jobId: string; artifacts: Artifact[]; onChanged: () => Promise<void> }) {
  const action = useAction();
  const [name, setName] = useState("");
  const [file, setFile] = useState<File>();

  const download = (artifact: Artifact) =>
    void action.run(async () => {
      const target = await api().call("presignDownload", { job_id: props.jobId, artifact_id: artifact.artifact_id });
      saveFrom(target.url, artifact.artifact_id);
    });
  const remove = (artifact: Artifact) =>
    void action.run(async () => {
      await api().artifacts.delete(props.jobId, artifact.artifact_id);
      await props.onChanged();
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
      await props.onChanged();
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
              {bytes(artifact.size_bytes)}, {artifact.content_type}
              {artifact.attempt === null ? "" : `, attempt ${artifact.attempt}`}, sha256 {artifact.sha256.slice(0, 12)}…
            </span>{" "}
            <ConfirmButton
              label="Delete"
              name={`Delete ${artifact.artifact_id}`}
              title={`Delete ${artifact.artifact_id}?`}
              confirm="Delete it"
              disabled={action.busy}
              onConfirm={() => remove(artifact)}
            >
              <p>Its bytes are deleted for good ({bytes(artifact.size_bytes)}).</p>
            </ConfirmButton>
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
