import { useEffect, useState } from "preact/hooks";
import { useIsAdmin } from "./admin.js";
import { Link } from "./components/link.js";
import { ApiKeysPage } from "./pages/api-keys.js";
import { BillingPage } from "./pages/billing.js";
import { JobPage } from "./pages/job-page.js";
import { JobsListPage } from "./pages/jobs-list.js";
import { NodesPage } from "./pages/nodes.js";
import { SchedulePage } from "./pages/schedule-page.js";
import { SchedulesPage } from "./pages/schedules.js";
import { SignInPage } from "./pages/sign-in.js";
import { SubmitJobPage } from "./pages/submit-job.js";
import { UsagePage } from "./pages/usage.js";
import { UsersPage } from "./pages/users.js";
import { WebhookPage } from "./pages/webhook-page.js";
import { WebhooksPage } from "./pages/webhooks.js";
import { navigate, useLocation } from "./router.js";
import { isSignedIn, onSessionChange, resume, signOut } from "./session.js";

interface NavItem {
  href: string;
  label: string;
  adminOnly?: boolean;
}

const NAV: NavItem[] = [
  { href: "/jobs", label: "Jobs" },
  { href: "/submit", label: "Submit" },
  { href: "/schedules", label: "Schedules" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/nodes", label: "Nodes" },
  { href: "/usage", label: "Usage" },
  { href: "/billing", label: "Billing" },
  { href: "/keys", label: "API keys" },
  { href: "/users", label: "Users", adminOnly: true },
];

/** `/<section>/<id>`: the id, decoded; null for another path. */
function idIn(path: string, section: string): string | null {
  const match = new RegExp(`^/${section}/([^/]+)$`).exec(path);
  return match ? decodeURIComponent(match[1]!) : null;
}

/** Which page a path shows. The gateway answers these paths with index.html (PORTAL_PAGES in services/gateway/portal/serve-portal.ts): keep the two lists alike. */
function Page(props: { url: URL }) {
  const path = props.url.pathname;
  const job = idIn(path, "jobs");
  if (job !== null) return <JobPage jobId={job} />;
  const schedule = idIn(path, "schedules");
  if (schedule !== null) return <SchedulePage scheduleId={schedule} />;
  const webhook = idIn(path, "webhooks");
  if (webhook !== null) return <WebhookPage webhookId={webhook} />;
  if (path === "/submit") return <SubmitJobPage />;
  if (path === "/schedules") return <SchedulesPage />;
  if (path === "/webhooks") return <WebhooksPage />;
  if (path === "/users") return <UsersPage />;
  if (path === "/usage") return <UsagePage />;
  if (path === "/keys") return <ApiKeysPage />;
  if (path === "/nodes") return <NodesPage />;
  if (path === "/billing") return <BillingPage outcome={props.url.searchParams.get("checkout")} />;
  return <JobsListPage url={props.url} />;
}

function MainNav(props: { section: NavItem | undefined }) {
  const admin = useIsAdmin();
  return (
    <nav aria-label="Main">
      {NAV.filter((item) => !item.adminOnly || admin).map((item) => (
        <Link href={item.href} aria-current={props.section === item ? "page" : undefined}>
          {item.label}
        </Link>
      ))}
      <a href="/docs">API reference</a>
      <button type="button" class="secondary" onClick={() => void signOut()}>
        Sign out
      </button>
    </nav>
  );
}

export function App() {
  const url = useLocation();
  const [signedIn, setSignedIn] = useState(isSignedIn());
  const [resuming, setResuming] = useState(true);
  useEffect(() => onSessionChange(() => setSignedIn(isSignedIn())), []);
  useEffect(() => {
    void resume().finally(() => setResuming(false));
  }, []);
  useEffect(() => {
    if (signedIn && url.pathname === "/sign-in") navigate("/jobs");
  }, [signedIn, url.pathname]);

  const section = NAV.find((item) => url.pathname === item.href || url.pathname.startsWith(`${item.href}/`));
  // Screen readers announce the title on each page change, as on a full load.
  useEffect(() => {
    document.title = `${signedIn ? (section?.label ?? "Jobs") : "Sign in"} · Compute Jobs`;
  }, [signedIn, section]);

  if (resuming) return <p class="hint page-pad">Loading…</p>;
  return (
    <>
      <a class="skip" href="#content">
        Skip to content
      </a>
      <header class="top">
        <Link href="/" class="brand">
          Compute Jobs
        </Link>
        {signedIn ? <MainNav section={section} /> : null}
      </header>
      <div id="content">{signedIn ? <Page url={url} /> : <SignInPage />}</div>
    </>
  );
}
