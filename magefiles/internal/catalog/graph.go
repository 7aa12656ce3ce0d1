package catalog

import (
	"fmt"
	"slices"

	"github.com/blang/semver/v4"
	"github.com/operator-framework/operator-registry/alpha/declcfg"
	"github.com/operator-framework/operator-registry/alpha/model"
)

// AddBundle adds b to cfg in its own package and in every package it upgrades: the olm.package when missing, the
// olm.bundle (replacing one of the same name), and in each of b's channels an entry that replaces the channel's
// head and carries the CSV's skipRange. The head comes from current, the model of cfg before the change; it must
// be older than b. Adding a bundle that a channel already lists only refreshes its skipRange.
func AddBundle(cfg *declcfg.DeclarativeConfig, current model.Model, pkg Package, b Bundle) error {
	version, err := semver.Parse(b.Version)
	if err != nil {
		return fmt.Errorf("bundle %s: version %q: want a semantic version: %w", b.Name, b.Version, err)
	}
	for _, p := range pkg.packages() {
		if !slices.ContainsFunc(cfg.Packages, func(have declcfg.Package) bool { return have.Name == p.Name }) {
			cfg.Packages = append(cfg.Packages, declcfg.Package{
				Schema: declcfg.SchemaPackage, Name: p.Name, DefaultChannel: p.DefaultChannel, Description: p.Description,
			})
		}
		for _, ch := range b.Channels {
			if err := addEntry(cfg, current, p.Name, ch, b, version); err != nil {
				return err
			}
		}
		setBundle(cfg, b.inPackage(p.Name))
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
