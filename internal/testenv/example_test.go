package testenv_test

import (
	"context"
	"fmt"
	"os"
	"testing"

	"github.com/fleetwright/fleetwright/internal/testenv"
)

// A package's tests share one API server started from TestMain and work each
// in a namespace of their own.
func Example() {
	var env *testenv.Env
	_ = func(m *testing.M) { os.Exit(testenv.Main(m, &env)) } // func TestMain

	_ = func(t *testing.T) { // func TestSomething
		t.Parallel()
		ns := env.Namespace(t)
		manifest := fmt.Sprintf("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: %s}\n", ns)
		if err := env.DryRunApply(context.Background(), []byte(manifest)); err != nil {
			t.Fatal(err)
		}
		kubeconfig := env.KubeconfigFile(t) // for a CLI under test: --kubeconfig=<path>
		_ = kubeconfig
	}
}
