package lifecycle

import (
	"fmt"
	"os"
	"strings"

	"github.com/fleetwright/fleetwright/internal/webhook/api"
)

// WebhookDeployments reads the deployments that the fleetwright webhook at
// url (such as https://fleetwright.example.com) records, sending the API
// bearer token held in tokenFile ("" for none). A url that is not http(s)
// is api.ErrNotHTTP, found before the token is read.
func WebhookDeployments(url, tokenFile string) (DeploymentLister, error) {
	c, err := api.NewClient(url, "", nil)
	if err != nil {
		return nil, err
	}
	if tokenFile == "" {
		return c, nil
	}
	b, err := os.ReadFile(tokenFile)
	if err != nil {
		return nil, fmt.Errorf("reading the token: %w", err)
	}
	if c, err = api.NewClient(url, strings.TrimSpace(string(b)), nil); err != nil {
		return nil, err
	}
	return c, nil
}
