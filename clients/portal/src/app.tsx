import { useEffect, useState } from "preact/hooks";
import { Link } from "./components/link.js";
import { ApiKeysPage } from "./pages/api-keys.js";
import { BillingPage } from "./pages/billing.js";
import { JobPage } from "./pages/job-page.js";
import { JobsListPage } from "./pages/jobs-list.js";
import { NodesPage } from "./pages/nodes.js";
import { SignInPage } from "./pages/sign-in.js";
import { SubmitJobPage } from "./pages/submit-job.js";
import { navigate, useLocation } from "./router.js";
import { isSignedIn, onSessionChange, resume, signOut } from "./session.js";

const NAV = [
  { href: "/jobs", label: "Jobs" },
  { href: "/submit", label: "Submit" },
  { href: "/keys", label: "API keys" },
  { href: "/nodes", label: "Nodes" },
  { href: "/billing", label: "Billing" },
];

/** Which page a path shows. The gateway answers these paths with index.html (PORTAL_PAGES in services/gateway/portal/serve-portal.ts): keep the two lists alike. */
function Page(props: { url: URL }) {
  const path = props.url.pathname;
  const job = /^\/jobs\/([^/]+)$/.exec(path);
  if (job) return <JobPage jobId={decodeURIComponent(job[1]!)} />;
  if (path === "/submit") return <SubmitJobPage />;
  if (path === "/keys") return <ApiKeysPage />;
  if (path === "/nodes") return <NodesPage />;
  if (path === "/billing") return <BillingPage outcome={props.url.searchParams.get("checkout")} />;
  return <JobsListPage />;
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
        {signedIn ? (
          <nav aria-label="Main">
            {NAV.map((item) => (
              <Link href={item.href} aria-current={section === item ? "page" : undefined}>
                {item.label}
              </Link>
            ))}
            <a href="/docs">API reference</a>
            <button type="button" class="secondary" onClick={() => void signOut()}>
              Sign out
            </button>
          </nav>
        ) : null}
      </header>
      <div id="content">{signedIn ? <Page url={url} /> : <SignInPage />}</div>
    </>
  );
}
