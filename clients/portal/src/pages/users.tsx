import { CardTable } from "../components/card-table.js";
import { useState } from "preact/hooks";
import { InviteUserRequest, Role } from "../../../../shared/contract/index.js";
import { ApiError } from "../../../sdk/src/index.js";
import { ErrorNote, Problems } from "../components/error-note.js";
import { StateBadge } from "../components/state-badge.js";
import { problemsOf, when } from "../format.js";
import { api } from "../session.js";
import { useAction, useLoad } from "../use-async.js";

/** The business's users, for its admins: invite one (a code to set a password goes by e-mail), change a role, disable or enable. */
export function UsersPage() {
  const users = useLoad(() => api().users.list({ limit: 500 }), []);
  const action = useAction(() => users.reload());

  if (users.error instanceof ApiError && users.error.status === 403)
    return (
      <main>
        <h1>Users</h1>
        <p class="note">Only the business's admins manage its users.</p>
      </main>
    );
  return (
    <main>
      <h1>Users</h1>
      <ErrorNote error={users.error ?? action.error} />
      <CardTable columns={["E-mail", "Role", "Status", "Last sign-in"]} actions>
        {users.data?.items.map((user) => (
          <tr data-user-id={user.user_id}>
            <td data-label="E-mail">{user.email}</td>
            <td data-label="Role">
              <select
                aria-label={`Role of ${user.email}`}
                value={user.role}
                disabled={action.busy}
                onChange={(e) => action.act(() => api().users.setRole(user.user_id, e.currentTarget.value as Role))}
              >
                {Role.options.map((role) => (
                  <option value={role}>{role}</option>
                ))}
              </select>
            </td>
            <td data-label="Status">
              <StateBadge state={user.status} />
            </td>
            <td data-label="Last sign-in">{when(user.last_sign_in_at)}</td>
            <td class="row-actions">
              {user.status === "disabled" ? (
                <button
                  type="button"
                  class="secondary"
                  disabled={action.busy}
                  aria-label={`Enable ${user.email}`}
                  onClick={() => action.act(() => api().users.enable(user.user_id))}
                >
                  Enable
                </button>
              ) : (
                <button
                  type="button"
                  class="danger"
                  disabled={action.busy}
                  aria-label={`Disable ${user.email}`}
                  onClick={() => action.act(() => api().users.disable(user.user_id))}
                >
                  Disable
                </button>
              )}
            </td>
          </tr>
        ))}
      </CardTable>
      <p class="hint">
        A disabled user is signed out everywhere at once and their API keys stop working; enable brings both back.
      </p>
      <InviteForm onInvited={users.reload} />
    </main>
  );
}

function InviteForm(props: { onInvited: () => Promise<void> }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("member");
  const [invited, setInvited] = useState<string>();
  const [problems, setProblems] = useState<string[]>([]);
  const action = useAction();
  const submit = (event: Event) => {
    event.preventDefault();
    const parsed = InviteUserRequest.safeParse({ email: email.trim(), role });
    if (!parsed.success) {
      setProblems(problemsOf(parsed.error.issues));
      return;
    }
    setProblems([]);
    void action.run(async () => {
      const user = await api().users.invite(parsed.data);
      setInvited(user.email);
      setEmail("");
      await props.onInvited();
    });
  };
  return (
    <form class="stack card" onSubmit={submit} aria-label="Invite a user">
      <h2>Invite a user</h2>
      <div class="grid">
        <label>
          E-mail
          <input
            name="invite-email"
            type="email"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label>
          Role
          <select name="invite-role" value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
            {Role.options.map((option) => (
              <option value={option}>{option}</option>
            ))}
          </select>
        </label>
      </div>
      <Problems problems={problems} />
      <button type="submit" disabled={action.busy}>
        Invite
      </button>
      {invited ? (
        <p class="note" role="status">
          Invited {invited}: a code to set their password is on its way to them.
        </p>
      ) : null}
      <ErrorNote error={action.error} />
    </form>
  );
}
