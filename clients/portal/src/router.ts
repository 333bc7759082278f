import { useEffect, useState } from "preact/hooks";

/** The portal's pages live at real paths (the gateway answers each with index.html). */
export function navigate(to: string, options: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (options.replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  dispatchEvent(new PopStateEvent("popstate"));
}

export function useLocation(): URL {
  const [href, setHref] = useState(location.href);
  useEffect(() => {
    const update = () => setHref(location.href);
    addEventListener("popstate", update);
    return () => removeEventListener("popstate", update);
  }, []);
  return new URL(href);
}

/** A same-tab link: a modified click (new tab, …) is left to the browser. */
export function followLink(event: MouseEvent): void {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
    return;
  const anchor = event.currentTarget as HTMLAnchorElement;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}
