//! The configuration in force, concern by concern. Routing (rules, registry, packs, composition) and
//! settings load and fail apart: each keeps its last good state (settings: the defaults until some
//! load; routing: none, so no pack is injected) and the errors of its last load, and says which.

use crate::config::{
    self, ConfigError, ConfigRoots, LoadedSettings, PluginSettings, RoutingSettings,
};
use crate::platform::api::{ConfigFailure, ConfigResult, ConfigSummary};
use crate::routing::{LoadedRouting, Router};

#[derive(Default)]
pub struct ConfigInForce {
    routing: Option<LoadedRouting>,
    routing_errors: Vec<ConfigError>,
    /// The routing part of the settings in force.
    routing_settings: RoutingSettings,
    settings_files: Vec<String>,
    settings_loaded: bool,
    settings_errors: Vec<ConfigError>,
}

impl ConfigInForce {
    /// Loads the settings, then routing with the routing settings in force. Returns the result and,
    /// when the settings loaded, the new settings for the caller to put in force (else `current`
    /// stays: the summary names its Graphiti URL).
    pub fn reload(
        &mut self,
        roots: &ConfigRoots,
        host_settings: Option<&str>,
        current: &PluginSettings,
    ) -> (ConfigResult, Option<PluginSettings>) {
        let mut errors = Vec::new();
        let mut loaded_settings = None;
        match config::load_settings(roots, host_settings) {
            Ok(LoadedSettings {
                plugin,
                routing,
                files,
            }) => {
                self.routing_settings = routing;
                self.settings_files = files;
                self.settings_loaded = true;
                self.settings_errors.clear();
                loaded_settings = Some(plugin);
            }
            Err(failed) => {
                errors.extend(failed.iter().cloned());
                self.settings_errors = failed;
            }
        }
        match Router::load(roots, &self.routing_settings) {
            Ok(loaded) => {
                self.routing = Some(loaded);
                self.routing_errors.clear();
            }
            Err(failed) => {
                if let Some(last_good) = &mut self.routing {
                    last_good.router.set_settings(self.routing_settings.clone());
                }
                errors.extend(failed.iter().cloned());
                self.routing_errors = failed;
            }
        }
        let graphiti = &loaded_settings.as_ref().unwrap_or(current).graphiti;
        let (graphiti_url, falkordb_url) = (graphiti.url.clone(), graphiti.falkordb.url.clone());
        let result = if errors.is_empty() {
            Ok(ConfigSummary {
                falkordb_url,
                ..self.summary(graphiti_url)
            })
        } else {
            Err(ConfigFailure {
                errors,
                in_force: self.in_force(),
                graphiti_url,
                falkordb_url,
            })
        };
        (result, loaded_settings)
    }

    pub fn router(&self) -> Option<&Router> {
        self.routing.as_ref().map(|loaded| &loaded.router)
    }

    /// What is in force, for a load that succeeded.
    fn summary(&self, graphiti_url: String) -> ConfigSummary {
        let routing = self.routing.as_ref();
        ConfigSummary {
            rules: routing.map_or(0, |r| r.router.rules.len() as u32),
            packs: routing.map_or(0, |r| r.router.registry.packs.len() as u32),
            composition_rules: routing.map_or(0, |r| r.router.composition_rules as u32),
            files: self
                .settings_files
                .iter()
                .chain(routing.map(|r| &r.files).into_iter().flatten())
                .cloned()
                .collect(),
            warnings: routing.map(|r| r.warnings.clone()).unwrap_or_default(),
            graphiti_url,
            falkordb_url: String::new(),
        }
    }

    /// For each concern whose last load failed: what is in force instead.
    fn in_force(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if !self.settings_errors.is_empty() {
            lines.push(if self.settings_loaded {
                "settings: the last good settings stay in force".to_string()
            } else {
                "settings: no settings have loaded yet: recall and capture run with the defaults"
                    .to_string()
            });
        }
        if !self.routing_errors.is_empty() {
            lines.push(if self.routing.is_some() {
                "routing: the last good routing configuration stays in force".to_string()
            } else {
                "routing: no routing configuration has loaded yet: no workflow pack is injected \
                 until one does; recall and capture go on"
                    .to_string()
            });
        }
        lines
    }

    /// Why no routing configuration is in force, with the first error of its last load.
    pub fn routing_off_reason(&self) -> String {
        format!(
            "no routing configuration has loaded yet: {}",
            first_errors(&self.routing_errors)
        )
    }

    /// What status shows about the configuration in force, concern by concern.
    pub fn status_lines(&self) -> Vec<String> {
        let reloaded_with = |errors: &[ConfigError]| {
            format!(
                "the last reload had {} error(s); check-config lists them",
                errors.len()
            )
        };
        let mut lines = vec![match &self.routing {
            None => format!("config:   ROUTING OFF: {}", self.routing_off_reason()),
            Some(loaded) => {
                let router = &loaded.router;
                let counts = format!(
                    "config:   {} rules, {} packs, {} composition rules",
                    router.rules.len(),
                    router.registry.packs.len(),
                    router.composition_rules
                );
                match self.routing_errors.as_slice() {
                    [] => counts,
                    errors => format!(
                        "{counts} (the last good routing configuration: {})",
                        reloaded_with(errors)
                    ),
                }
            }
        }];
        match (self.settings_errors.as_slice(), self.settings_loaded) {
            ([], _) => {}
            (errors, false) => lines.push(format!(
                "settings: DEFAULTS: no settings have loaded yet: {}",
                first_errors(errors)
            )),
            (errors, true) => lines.push(format!(
                "settings: the last good settings ({})",
                reloaded_with(errors)
            )),
        }
        lines
    }
}

/// The first of `errors`, and how many more there are.
fn first_errors(errors: &[ConfigError]) -> String {
    match errors {
        [] => "no error was recorded".into(),
        [one] => one.to_string(),
        [first, rest @ ..] => format!("{first} (and {} more: check-config lists them)", rest.len()),
    }
}

/// The configuration an instance holds: routing and settings in force, the last settings that
/// loaded (the defaults until some do) and the settings the host lays over the settings file
/// (OpenClaw's plugin config, as JSON).
#[derive(Default)]
pub struct ConfigState {
    pub in_force: ConfigInForce,
    pub settings: crate::config::PluginSettings,
    pub host_settings: Option<String>,
    pub loaded_once: bool,
}
