import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const DOCS = join(ROOT, "docs");
const DECISIONS = join(DOCS, "decisions");

/** README.md and every markdown file under docs/. */
function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return walk(path);
      return name.endsWith(".md") ? [path] : [];
    });
  return [join(ROOT, "README.md"), ...walk(DOCS)];
}

/** The text outside fenced code blocks. */
function unfenced(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces made hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc}\- ]/gu, "")
    .replace(/ /g, "-");
}

const anchorsOf = new Map<string, Set<string>>();

/** Every anchor of a markdown file, a repeated heading's with `-1`, `-2`, … as GitHub numbers them. */
function anchors(file: string): Set<string> {
  const known = anchorsOf.get(file);
  if (known) return known;
  const seen = new Map<string, number>();
  const found = new Set<string>();
  anchorsOf.set(file, found);
  for (const match of unfenced(readFileSync(file, "utf8")).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1] ?? "");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    found.add(count === 0 ? base : `${base}-${count}`);
  }
  return found;
}

interface Link {
  from: string;
  target: string;
}

/** The links of a file that stay in the repository: no scheme, no `mailto:`. */
function localLinks(file: string): Link[] {
  // Outside code, where a `](…)` is a link.
  const text = unfenced(readFileSync(file, "utf8")).replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)]
    .map((match) => match[1] ?? "")
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target))
    .map((target) => ({ from: relative(ROOT, file), target }));
}

/** What is wrong with a link, or null: a file that does not exist, one outside the repository, an anchor no heading has. */
function brokenLink({ from, target }: Link): string | null {
  const [path = "", anchor] = target.split("#", 2);
  const file = path === "" ? join(ROOT, from) : resolve(dirname(join(ROOT, from)), decodeURIComponent(path));
  if (file !== ROOT && !file.startsWith(ROOT + sep)) return "points outside the repository";
  if (!existsSync(file)) return "names a file that does not exist";
  if (anchor === undefined || anchor === "" || !file.endsWith(".md")) return null;
  return anchors(file).has(decodeURIComponent(anchor)) ? null : `has no heading for #${anchor}`;
}

describe("the links of README.md and docs/", () => {
  it("each reach a file of the repository and, with an anchor, one of its headings", () => {
    const broken = markdownFiles()
      .flatMap(localLinks)
      .map((link) => ({ link, problem: brokenLink(link) }))
      .filter(({ problem }) => problem !== null)
      .map(({ link, problem }) => `${link.from}: (${link.target}) ${problem}`);
    expect(broken).toEqual([]);
  });

  it("name no design document that lives outside the repository", () => {
    const outside = markdownFiles().filter((file) =>
      /ARCHITECTURE\.md|\.\.\/shared\/|shared\/seed\//.test(readFileSync(file, "utf8")),
    );
    expect(outside.map((file) => relative(ROOT, file))).toEqual([]);
  });

  it("find a heading anchor as GitHub makes it", () => {
    expect(slug("The job path's budget")).toBe("the-job-paths-budget");
    expect(slug("The soak (`make chaos`)")).toBe("the-soak-make-chaos");
    expect(slug("Rolling upgrades: records keep what they do not know")).toBe(
      "rolling-upgrades-records-keep-what-they-do-not-know",
    );
  });

  it("catch a link to a missing anchor, a missing file and a file outside the repository", () => {
    expect(brokenLink({ from: "README.md", target: "docs/architecture.md#no-such-heading" })).toMatch(/no heading/);
    expect(brokenLink({ from: "README.md", target: "docs/no-such-page.md" })).toMatch(/does not exist/);
    expect(brokenLink({ from: "docs/architecture.md", target: "../../outside.md" })).toMatch(/outside/);
    expect(brokenLink({ from: "README.md", target: "docs/architecture.md#the-scheduler" })).toBeNull();
  });
});

const DECISION_FILE = /^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/;

describe("docs/decisions", () => {
  const files = readdirSync(DECISIONS).filter((name) => DECISION_FILE.test(name));

  it("holds one decision per file, numbered as its name and in the shape of a decision record", () => {
    const misshapen = files.filter((name) => {
      const text = readFileSync(join(DECISIONS, name), "utf8");
      const number = DECISION_FILE.exec(name)?.[1];
      return !(
        text.startsWith(`# ${number}. `) &&
        /^Status: \S/m.test(text) &&
        ["## Context", "## Decision", "## Consequences"].every((heading) => new RegExp(`^${heading}$`, "m").test(text))
      );
    });
    expect(misshapen).toEqual([]);
    expect(new Set(files.map((name) => name.slice(0, 4))).size).toBe(files.length);
  });

  it("lists every decision in its index", () => {
    const index = readFileSync(join(DECISIONS, "README.md"), "utf8");
    expect(files.filter((name) => !index.includes(`](${name})`))).toEqual([]);
  });
});
