package catalog

import (
	"fmt"
	"sort"
	"strings"
)

// Check verifies the package's blobs the way `opm validate` would for the points this step changes: one
// olm.package whose default channel exists, every channel entry naming a bundle of the package, one head per
// channel, and every bundle in some channel.
func Check(blobs []Blob, pkg string) error {
	var problems []string
	bundles := map[string]bool{}
	inChannel := map[string]bool{}
	var defaultChannel string
	channels := map[string]bool{}
	packages := 0
	for _, b := range blobs {
		if blobPackage(b) != pkg {
			continue
		}
		name, _ := b["name"].(string)
		switch b["schema"] {
		case "olm.package":
			packages++
			defaultChannel, _ = b["defaultChannel"].(string)
		case "olm.bundle":
			bundles[name] = true
		case "olm.channel":
			channels[name] = true
		}
	}
	if packages != 1 {
		problems = append(problems, fmt.Sprintf("%d olm.package blobs for %s: want exactly one", packages, pkg))
	}
	if !channels[defaultChannel] {
		problems = append(problems, fmt.Sprintf("the default channel %q has no olm.channel blob", defaultChannel))
	}
	for _, b := range blobs {
		if blobPackage(b) != pkg || b["schema"] != "olm.channel" {
			continue
		}
		entries, _ := b["entries"].([]any)
		if _, err := channelHead(entries); err != nil {
			problems = append(problems, fmt.Sprintf("channel %v: %v", b["name"], err))
		}
		for _, e := range entries {
			m, _ := e.(map[string]any)
			n, _ := m["name"].(string)
			inChannel[n] = true
			if !bundles[n] {
				problems = append(problems, fmt.Sprintf("channel %v: entry %s has no olm.bundle", b["name"], n))
			}
		}
	}
	for n := range bundles {
		if !inChannel[n] {
			problems = append(problems, fmt.Sprintf("bundle %s is in no channel", n))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	sort.Strings(problems)
	return fmt.Errorf("the catalog is not valid:\n  - %s", strings.Join(problems, "\n  - "))
}
