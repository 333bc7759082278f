package main

import (
	"context"
	"fmt"

	"github.com/compose-spec/compose-go/v2/cli"
)

func checkCompose(ctx context.Context, file string) ([]byte, error) {
	options, err := cli.NewProjectOptions([]string{file}, cli.WithOsEnv, cli.WithDefaultProfiles(), cli.WithConsistency(true), cli.WithResolvedPaths(false))
	if err != nil {
		return nil, fmt.Errorf("compose %s: %w", file, err)
	}
	project, err := options.LoadProject(ctx)
	if err != nil {
		return nil, fmt.Errorf("compose %s: %w", file, err)
	}
	return project.MarshalJSON()
}
