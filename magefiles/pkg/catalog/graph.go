package catalog

import (
	"fmt"
	"slices"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/model"
)

// AddBundle adds b to cfg in its package: the olm.package when missing, the olm.bundle (replacing one of the same
// name), and in each of b's channels an entry that replaces the channel's head and carries the CSV's skipRange.
// The head comes from current, the model of cfg before the change; it must be older than b. Adding a bundle that a
// channel already lists only refreshes its skipRange.
func AddBundle(cfg *declcfg.DeclarativeConfig, current model.Model, pkg Package, b Bundle) error {
	version, err := semver.Parse(b.Version)
	if err != nil {
		return fmt.Errorf("bundle %s: version %q: want a semantic version: %w", b.Name, b.Version, err)
	}
	if !slices.ContainsFunc(cfg.Packages, func(have declcfg.Package) bool { return have.Name == pkg.Name }) {
		cfg.Packages = append(cfg.Packages, declcfg.Package{
			Schema: declcfg.SchemaPackage, Name: pkg.Name, DefaultChannel: pkg.DefaultChannel, Description: pkg.Description,
		})
	}
	for _, ch := range b.Channels {
		if err := addEntry(cfg, current, pkg.Name, ch, b, version); err != nil {
			return err
		}
	}
	setBundle(cfg, b.Bundle)
	return nil
}

// Resolvable checks what OLM needs beyond `opm validate` to resolve Subscriptions from the catalog: OLM finds the
// bundle a solution names by its CSV name and channel across the whole catalog (operator-lifecycle-manager v0.38.0,
// pkg/controller/registry/resolver: cache.ExactlyOne), so a CSV name carried by two packages makes every
// resolution that touches it fail with "expected exactly one operator, got 2". The error names the bundle and the
// packages.
func Resolvable(cfg declcfg.DeclarativeConfig) error {
	packages := map[string][]string{}
	for _, b := range cfg.Bundles {
		packages[b.Name] = append(packages[b.Name], b.Package)
	}
	for _, b := range cfg.Bundles {
		if ps := packages[b.Name]; len(ps) > 1 {
			return fmt.Errorf("bundle %s is in packages %s: OLM finds a bundle by its CSV name across the catalog and cannot resolve a "+
				"Subscription when two packages carry the same CSV (\"expected exactly one operator, got %d\"); keep each CSV in one package",
				b.Name, strings.Join(ps, " and "), len(ps))
		}
	}
	return nil
}

func setBundle(cfg *declcfg.DeclarativeConfig, b declcfg.Bundle) {
	if i := slices.IndexFunc(cfg.Bundles, func(have declcfg.Bundle) bool { return have.Package == b.Package && have.Name == b.Name }); i >= 0 {
		cfg.Bundles[i] = b
		return
	}
	cfg.Bundles = append(cfg.Bundles, b)
}

// addEntry adds b's entry to channel ch of package pkg, creating the channel when missing.
func addEntry(cfg *declcfg.DeclarativeConfig, current model.Model, pkg, ch string, b Bundle, version semver.Version) error {
	i := slices.IndexFunc(cfg.Channels, func(c declcfg.Channel) bool { return c.Package == pkg && c.Name == ch })
	if i < 0 {
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: ch})
		i = len(cfg.Channels) - 1
	}
	channel := &cfg.Channels[i]
	if j := slices.IndexFunc(channel.Entries, func(e declcfg.ChannelEntry) bool { return e.Name == b.Name }); j >= 0 {
		channel.Entries[j].SkipRange = b.SkipRange
		return nil
	}
	entry := declcfg.ChannelEntry{Name: b.Name, SkipRange: b.SkipRange}
	if mp := current[pkg]; mp != nil && mp.Channels[ch] != nil && len(mp.Channels[ch].Bundles) > 0 {
		head, err := mp.Channels[ch].Head()
		if err != nil {
			return fmt.Errorf("package %s channel %s: %w", pkg, ch, err)
		}
		if !version.GT(head.Version) {
			return fmt.Errorf("package %s channel %s: the head %s has version %s, not older than %s: a new bundle must have a higher version (raise operator/VERSION or tag operator/vX.Y.Z)",
				pkg, ch, head.Name, head.Version, version)
		}
		entry.Replaces = head.Name
	}
	channel.Entries = append(channel.Entries, entry)
	return nil
}
