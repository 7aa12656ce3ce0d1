package catalog

import (
	"fmt"

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
		if !hasPackage(cfg, p.Name) {
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

func hasPackage(cfg *declcfg.DeclarativeConfig, name string) bool {
	for _, p := range cfg.Packages {
		if p.Name == name {
			return true
		}
	}
	return false
}

func setBundle(cfg *declcfg.DeclarativeConfig, b declcfg.Bundle) {
	for i := range cfg.Bundles {
		if cfg.Bundles[i].Package == b.Package && cfg.Bundles[i].Name == b.Name {
			cfg.Bundles[i] = b
			return
		}
	}
	cfg.Bundles = append(cfg.Bundles, b)
}

// addEntry adds b's entry to channel ch of package pkg, creating the channel when missing.
func addEntry(cfg *declcfg.DeclarativeConfig, current model.Model, pkg, ch string, b Bundle, version semver.Version) error {
	i := -1
	for j, c := range cfg.Channels {
		if c.Package == pkg && c.Name == ch {
			i = j
		}
	}
	if i < 0 {
		cfg.Channels = append(cfg.Channels, declcfg.Channel{Schema: declcfg.SchemaChannel, Package: pkg, Name: ch})
		i = len(cfg.Channels) - 1
	}
	channel := &cfg.Channels[i]
	for j := range channel.Entries {
		if channel.Entries[j].Name == b.Name {
			channel.Entries[j].SkipRange = b.SkipRange
			return nil
		}
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
