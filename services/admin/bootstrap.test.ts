import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkAdminPassword, loadBootstrapFile } from "./bootstrap.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "bootstrap-file-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const SETTINGS = {
  app_id: "acme",
  app_name: "Acme Corp",
  operator_business_name: "Acme Operations",
  admin_email: "Ops@Acme.example",
};

async function fileWith(content: unknown): Promise<string> {
  const path = join(dir, `bootstrap-${Math.random().toString(36).slice(2)}.json`);
  await writeFile(path, typeof content === "string" ? content : JSON.stringify(content));
  return path;
}

describe("loadBootstrapFile", () => {
  it("reads the settings, and a password_file relative to the file's folder", async () => {
    const path = await fileWith({ ...SETTINGS, password_file: "secrets/admin" });
    expect(await loadBootstrapFile(path)).toEqual({
      plan: { ...SETTINGS, admin_email: "ops@acme.example" },
      password: { from: "file", path: join(dir, "secrets/admin"), setting: `${path}: password_file` },
    });
    expect((await loadBootstrapFile(await fileWith(SETTINGS))).password).toBeUndefined();
  });

  it("refuses a password in the file, saying what to use instead", async () => {
    await expect(loadBootstrapFile(await fileWith({ ...SETTINGS, password: "correct horse battery" }))).rejects.toThrow(
      /"password" is refused.*"password_file".*--password-stdin/,
    );
  });

  it("lists every invalid or unknown field, and names a file that is not JSON", async () => {
    const path = await fileWith({
      app_id: "Acme!",
      app_name: "",
      operator_business_name: "Ops",
      admin_email: "nope",
      colour: "red",
    });
    const message = await loadBootstrapFile(path).then(
      () => "accepted",
      (caught: Error) => caught.message,
    );
    expect(message).toContain(`${path} is not a valid bootstrap file:`);
    for (const field of ["app_id", "app_name", "admin_email"]) expect(message).toContain(`  ${field}: `);
    expect(message).toContain("colour");
    await expect(loadBootstrapFile(await fileWith("{ not json"))).rejects.toThrow(/--file: cannot read .* as JSON/);
    await expect(loadBootstrapFile(join(dir, "missing.json"))).rejects.toThrow("(ENOENT)");
  });
});

describe("checkAdminPassword", () => {
  it("refuses a password the user schema refuses, before anything is created", () => {
    expect(() => checkAdminPassword("short")).toThrow("password: at least 12 characters");
    expect(() => checkAdminPassword("correct horse battery")).not.toThrow();
  });
});
