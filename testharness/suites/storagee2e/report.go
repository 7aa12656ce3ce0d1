package storagee2e

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"
)

// Spec is one test of a run: its full name, its state (passed, failed, skipped, or ginkgo's other failure states:
// panicked, interrupted, aborted, timedout), how long it took and, for a test that did not pass, why.
type Spec struct {
	Name, State, Message string
	Duration             time.Duration
}

// Report is what a run did with the tests it selected: the ones ginkgo's focus and skip left out are not in it.
type Report struct {
	Passed, Failed, Skipped []Spec
}

// filteredMessage is the skip message ginkgo's JUnit report gives the specs the focus and skip expressions left
// out; a spec that ran and skipped itself (e2eskipper.Skipf) carries "skipped - <why>".
const filteredMessage = "skipped"

// itPrefix starts the JUnit name of every test (a ginkgo It); suite nodes have their own.
const itPrefix = "[It] "

// ReadJUnit reads a ginkgo JUnit report (the CLI's --junit-report, merged over its processes) into a Report, leaving out the specs that
// were filtered out and ginkgo's own suite nodes ([SynchronizedBeforeSuite] and the like) that passed.
func ReadJUnit(r io.Reader) (Report, error) {
	var doc struct {
		Suites []struct {
			Cases []struct {
				Name    string  `xml:"name,attr"`
				Status  string  `xml:"status,attr"`
				Seconds float64 `xml:"time,attr"`
				Skipped *struct {
					Message string `xml:"message,attr"`
				} `xml:"skipped"`
				Failure *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"failure"`
				Error *struct {
					Message string `xml:"message,attr"`
					Text    string `xml:",chardata"`
				} `xml:"error"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return Report{}, fmt.Errorf("reading the JUnit report: %w", err)
	}
	var rep Report
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			spec := Spec{Name: strings.TrimPrefix(c.Name, itPrefix), State: c.Status,
				Duration: time.Duration(c.Seconds * float64(time.Second)).Round(time.Second)}
			if !strings.HasPrefix(c.Name, itPrefix) {
				// ginkgo's suite nodes ([SynchronizedBeforeSuite], [ReportAfterSuite] ...) are not tests; a failed
				// one still fails the run.
				if c.Status == "passed" || c.Status == "skipped" {
					continue
				}
			}
			switch {
			case c.Status == "passed":
				rep.Passed = append(rep.Passed, spec)
			case c.Status == "skipped" || c.Status == "pending":
				if c.Skipped == nil || strings.TrimSpace(c.Skipped.Message) == filteredMessage {
					continue
				}
				spec.Message = strings.TrimPrefix(c.Skipped.Message, "skipped - ")
				rep.Skipped = append(rep.Skipped, spec)
			default:
				switch {
				case c.Failure != nil:
					spec.Message = firstNonEmpty(c.Failure.Message, c.Failure.Text)
				case c.Error != nil:
					spec.Message = firstNonEmpty(c.Error.Message, c.Error.Text)
				}
				rep.Failed = append(rep.Failed, spec)
			}
		}
	}
	return rep, nil
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v = strings.TrimSpace(v); v != "" {
			return v
		}
	}
	return ""
}

// Summary is one line: how many passed, failed and were skipped.
func (r Report) Summary() string {
	return fmt.Sprintf("%d passed, %d failed, %d skipped", len(r.Passed), len(r.Failed), len(r.Skipped))
}

// String lists every spec with its state and the seconds it took, and why for the ones that did not pass.
func (r Report) String() string {
	var b strings.Builder
	b.WriteString(r.Summary() + "\n")
	for _, group := range []struct {
		label string
		specs []Spec
	}{{"FAILED", r.Failed}, {"passed", r.Passed}, {"skipped", r.Skipped}} {
		for _, s := range group.specs {
			if s.Duration > 0 {
				fmt.Fprintf(&b, "  %-7s %4ds %s\n", group.label, int(s.Duration.Seconds()), s.Name)
			} else {
				fmt.Fprintf(&b, "  %-7s       %s\n", group.label, s.Name)
			}
			if s.Message != "" {
				fmt.Fprintf(&b, "          %s\n", firstLine(s.Message))
			}
		}
	}
	return b.String()
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
