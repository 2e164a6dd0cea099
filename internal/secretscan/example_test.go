package secretscan_test

import (
	"fmt"

	"github.com/fleetwright/fleetwright/internal/secretscan"
)

func ExampleIsCredentialName() {
	for _, name := range []string{"DB_PASSWORD", "apiKey", "AUTH", "passwordKey", "existingSecret", "PASSWORD_FILE"} {
		fmt.Println(name, secretscan.IsCredentialName(name))
	}
	// Output:
	// DB_PASSWORD true
	// apiKey true
	// AUTH true
	// passwordKey false
	// existingSecret false
	// PASSWORD_FILE false
}

func ExampleFind() {
	text := "DATABASE_URL=postgres://app:hunter2secret@db/app"
	for _, m := range secretscan.Find(text) {
		fmt.Printf("%d-%d: %s, %s\n", m.Start, m.End, m.What, m.Redacted())
	}
	// Output:
	// 13-41: a password in a postgres:// URL, postgres://app:****@…
}

func ExampleFlags() {
	args := []string{"mysql", "-uroot", "-phunter2", "--password-file=/run/pw", "--token", "abc123"}
	for _, f := range secretscan.Flags(args) {
		fmt.Println(f.Arg, f.Flag)
	}
	// Output:
	// 2 -p
	// 5 --token
}
