package validate

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// A cronjob's schedule, checked as the CronJob controller parses it: five
// fields (minute, hour, day of month, month, day of week), each a list of
// *, ?, values, ranges a-b and steps /n, month and weekday names allowed;
// or a descriptor such as @daily or @every 90m.

type cronField struct {
	name     string
	min, max int
	names    []string // names of min, min+1, …
	question bool     // ? allowed
}

var cronFields = [5]cronField{
	{name: "minute", min: 0, max: 59},
	{name: "hour", min: 0, max: 23},
	{name: "day of month", min: 1, max: 31, question: true},
	{name: "month", min: 1, max: 12, names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
	{name: "day of week", min: 0, max: 6, names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}, question: true},
}

var cronDescriptors = map[string]bool{
	"@yearly": true, "@annually": true, "@monthly": true, "@weekly": true, "@daily": true, "@midnight": true, "@hourly": true,
}

// cronProblem returns why s is not a valid schedule, or "".
func cronProblem(s string) string {
	t := strings.TrimSpace(s)
	if t == "" {
		return "must not be empty; write five fields such as \"0 3 * * *\" or a descriptor such as @daily"
	}
	if up := strings.ToUpper(t); strings.HasPrefix(up, "TZ=") || strings.HasPrefix(up, "CRON_TZ=") {
		return "must not set a time zone; use time_zone"
	}
	if t[0] == '@' {
		word, rest, _ := strings.Cut(t, " ")
		switch {
		case cronDescriptors[strings.ToLower(word)] && strings.TrimSpace(rest) == "":
			return ""
		case strings.ToLower(word) == "@every":
			d, err := time.ParseDuration(strings.TrimSpace(rest))
			if err != nil || d < time.Second {
				return fmt.Sprintf("%q: @every needs a duration of at least 1s, such as @every 90m", s)
			}
			return ""
		}
		return fmt.Sprintf("%q is not a descriptor; use @yearly, @monthly, @weekly, @daily, @hourly or @every <duration>", s)
	}
	fields := strings.Fields(t)
	if len(fields) != 5 {
		return fmt.Sprintf("%q has %d fields; a schedule has 5: minute hour day-of-month month day-of-week, such as \"0 3 * * *\"", s, len(fields))
	}
	for i, f := range fields {
		if m := cronFields[i].check(f); m != "" {
			return fmt.Sprintf("%q: %s field %q %s", s, cronFields[i].name, f, m)
		}
	}
	return ""
}

func (cf cronField) check(f string) string {
	for item := range strings.SplitSeq(f, ",") {
		if item == "" {
			return "has an empty list item"
		}
		rng, step, hasStep := strings.Cut(item, "/")
		if hasStep {
			n, err := strconv.Atoi(step)
			if err != nil || n <= 0 || step[0] == '+' {
				return fmt.Sprintf("has step %q; a step is a whole number of at least 1", step)
			}
		}
		if rng == "*" || (rng == "?" && cf.question) {
			continue
		}
		if rng == "?" {
			return "uses ?, which only the day fields take"
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		a, m := cf.value(lo)
		if m != "" {
			return m
		}
		if !isRange {
			continue
		}
		b, m := cf.value(hi)
		if m != "" {
			return m
		}
		if a > b {
			return fmt.Sprintf("has range %s, which starts after it ends", rng)
		}
	}
	return ""
}

func (cf cronField) value(s string) (int, string) {
	for i, n := range cf.names {
		if strings.EqualFold(s, n) {
			return cf.min + i, ""
		}
	}
	n, err := strconv.Atoi(s)
	if err != nil || s == "" || s[0] == '+' || s[0] == '-' {
		if cf.names != nil {
			return 0, fmt.Sprintf("has %q, which is neither a number from %d to %d nor a name such as %s", s, cf.min, cf.max, strings.ToUpper(cf.names[0]))
		}
		return 0, fmt.Sprintf("has %q, which is not a number from %d to %d", s, cf.min, cf.max)
	}
	if n < cf.min || n > cf.max {
		return 0, fmt.Sprintf("has %d, outside %d-%d", n, cf.min, cf.max)
	}
	return n, ""
}
