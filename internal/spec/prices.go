package spec

// Prices are what the platform counts for the resources an app requests,
// per hour: the webhook's status pages price each app's requests with them
// (docs/webhook.md).
type Prices struct {
	// CPUHour is the price of one requested CPU core for one hour.
	CPUHour float64 `json:"cpu_hour,omitempty" jsonschema:"minimum=0,example=0.031"`
	// MemoryGiBHour is the price of one requested GiB of memory for one hour.
	MemoryGiBHour float64 `json:"memory_gib_hour,omitempty" jsonschema:"minimum=0,example=0.0042"`
	// Currency is shown after each price: an ISO 4217 code.
	Currency string `json:"currency,omitempty" jsonschema:"pattern=^[A-Z]{3}$,example=EUR"`
}
