// Command manifest-check validates the deployment files offline, for `make test`:
//
//	manifest-check kustomize <dir>  builds the kustomization as `kubectl kustomize` does and
//	                                decodes every object into its Kubernetes API type, refusing
//	                                unknown and duplicate fields; prints the built YAML.
//	manifest-check compose <file>   loads a compose file as `docker compose config` does
//	                                (compose-spec schema, interpolation from the environment);
//	                                prints the resolved project as JSON.
//
// Problems go to standard error, one per line, with exit code 1; usage errors exit 2.
package main

import (
	"context"
	"fmt"
	"os"
)

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: manifest-check kustomize <dir> | compose <file>")
		os.Exit(2)
	}
	var out []byte
	var err error
	switch os.Args[1] {
	case "kustomize":
		out, err = checkKustomization(os.Args[2])
	case "compose":
		out, err = checkCompose(context.Background(), os.Args[2])
	default:
		fmt.Fprintf(os.Stderr, "manifest-check: unknown command %q\n", os.Args[1])
		os.Exit(2)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "manifest-check: %v\n", err)
		os.Exit(1)
	}
	if _, err := os.Stdout.Write(out); err != nil {
		os.Exit(1)
	}
}
