import pkg from "../../package.json" with { type: "json" };

/** The version of `cjs`: the package's, as `cjs --version` prints it and the User-Agent carries it. */
export const CLI_VERSION: string = pkg.version;
