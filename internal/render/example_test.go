package render_test

import (
	"context"
	"fmt"

	"github.com/fleetwright/fleetwright/internal/render"
)

// Render the examples' folder, keeping every image as written: the command
// prints what Run returns.
func ExampleRun() {
	res, err := render.Run(context.Background(), render.Options{Source: render.Dir("../../examples")})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d app(s), %d problem(s), %d file(s)\n", res.Summary.Apps, len(res.Problems), res.Summary.Files)
	fmt.Println(res.Fleet.Files[0].Path)
	// Output:
	// 6 app(s), 0 problem(s), 49 file(s)
	// apps/prod-eu/my-project/my-api/api/deployment-my-api-api.yaml
}
