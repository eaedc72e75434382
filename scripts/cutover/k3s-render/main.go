// Command k3s-render runs k3s's own code on a k3s (or RKE2) server config file and prints the
// kube-controller-manager arguments `k3s server` would start it with, one a line
// (test/unit/cutover.test.ts).
//
//	k3s-render CONFIG.yaml
//
// Steps, each k3s's code (github.com/k3s-io/k3s at the pseudo-version in ../go.mod):
//   - pkg/configfilearg's Parser, as `k3s server` runs it (cmd/k3s's DefaultParser: config keys
//     checked against the server's flags, so a misspelt key fails as it does on a node), turns the
//     file into `server` command-line flags;
//   - urfave/cli parses them with the server's own flag set (pkg/cli/cmds NewServerCommand), with
//     DisableSliceFlagSeparator as cmd/k3s sets it (a comma in a value does not split it);
//   - pkg/util GetArgs merges `kube-controller-manager-arg` into the controller manager's defaults,
//     as pkg/daemons/control/server.go controllerManager does: `name=value` replaces the default,
//     `name+=value` appends to it, `name-=value` prepends.
//
// Only the `controllers` default is restated here, from pkg/daemons/control/server.go
// (`*,tokencleaner`, plus `,-service,-route,-cloud-node-lifecycle` unless
// `disable-cloud-controller`): the other defaults are node paths and addresses, not what the test
// checks, and controllerManager itself starts the process, so it cannot be called.
//
// Exit codes: 0 printed, 1 rejected (the reason on stderr), 2 usage.
package main

import (
	"fmt"
	"os"

	"github.com/k3s-io/k3s/pkg/cli/cmds"
	"github.com/k3s-io/k3s/pkg/configfilearg"
	"github.com/k3s-io/k3s/pkg/util"
	"github.com/sirupsen/logrus"
	"github.com/urfave/cli/v2"
)

// warnings counts what k3s logs at warning level or worse while it reads the file: k3s itself
// only warns about a key it does not know ("Unknown flag … found in config.yaml, skipping"), and a
// node would start with that setting silently dropped, so here it is an error.
type warnings struct{ n int }

func (w *warnings) Levels() []logrus.Level {
	return []logrus.Level{logrus.PanicLevel, logrus.FatalLevel, logrus.ErrorLevel, logrus.WarnLevel}
}

func (w *warnings) Fire(*logrus.Entry) error { w.n++; return nil }

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: k3s-render CONFIG.yaml")
		os.Exit(2)
	}
	// cmd/k3s's DefaultParser, with the config file given here instead of /etc/rancher/k3s/config.yaml.
	parser := &configfilearg.Parser{
		After:         []string{"server", "agent", "etcd-snapshot:1"},
		ConfigFlags:   []string{"--config", "-c"},
		EnvName:       "K3S_CONFIG_FILE",
		DefaultConfig: os.Args[1],
		ValidFlags:    map[string][]cli.Flag{"server": cmds.ServerFlags, "etcd-snapshot": cmds.EtcdSnapshotFlags},
	}
	seen := &warnings{}
	logrus.AddHook(seen)
	args, err := parser.Parse([]string{"k3s", "server"})
	if err != nil {
		fail(fmt.Errorf("config file: %w", err))
	}
	if seen.n > 0 {
		fail(fmt.Errorf("k3s warned %d time(s) about the config file (above); it would skip what it warned about", seen.n))
	}
	app := cmds.NewApp()
	app.DisableSliceFlagSeparator = true
	var extra []string
	var disableCCM bool
	app.Commands = []*cli.Command{cmds.NewServerCommand(func(*cli.Context) error {
		extra = cmds.ServerConfig.ExtraControllerArgs.Value()
		disableCCM = cmds.ServerConfig.DisableCCM
		return nil
	})}
	if err := app.Run(args); err != nil {
		fail(fmt.Errorf("server flags %v: %w", args, err))
	}
	argsMap := map[string]string{"controllers": "*,tokencleaner"}
	if !disableCCM {
		argsMap["controllers"] += ",-service,-route,-cloud-node-lifecycle"
	}
	for _, a := range util.GetArgs(argsMap, extra) {
		fmt.Println(a)
	}
}

func fail(err error) {
	fmt.Fprintf(os.Stderr, "k3s-render: %v\n", err)
	os.Exit(1)
}
