//! The dashboard's interaction state: which pane has focus, what is selected, the filter, the
//! help and the commit prompt; keys in, actions out. The host does the actions (commit, cancel
//! through its write path) — this module only asks.

use crate::model::Model;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// The panes, in tab order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pane {
    /// Pools of the followed pairs and the selected pool's swaps.
    Pools,
    /// Price chart per followed pair.
    Prices,
    /// Positions against the current price.
    Positions,
    /// Open permits with their countdown.
    Permits,
    /// Tool calls: start, steps, end.
    Tools,
    /// Position and health-factor alerts.
    Alerts,
    /// Every event, filterable.
    Events,
}

impl Pane {
    /// Every pane, in tab order.
    pub const ALL: [Pane; 7] =
        [Pane::Pools, Pane::Prices, Pane::Positions, Pane::Permits, Pane::Tools, Pane::Alerts, Pane::Events];

    /// The pane's title.
    pub fn title(self) -> &'static str {
        match self {
            Pane::Pools => "Pool Explorer",
            Pane::Prices => "Price Dashboard",
            Pane::Positions => "Position Monitor",
            Pane::Permits => "Permits",
            Pane::Tools => "Tool Activity",
            Pane::Alerts => "Alerts",
            Pane::Events => "Events",
        }
    }

    /// The pane's name in the tab bar of a small terminal.
    pub fn short(self) -> &'static str {
        match self {
            Pane::Pools => "Pools",
            Pane::Prices => "Prices",
            Pane::Positions => "Positions",
            Pane::Permits => "Permits",
            Pane::Tools => "Tools",
            Pane::Alerts => "Alerts",
            Pane::Events => "Events",
        }
    }

    fn index(self) -> usize {
        Self::ALL.iter().position(|p| *p == self).unwrap_or(0)
    }

    fn step(self, by: isize) -> Pane {
        let n = Self::ALL.len() as isize;
        Self::ALL[((self.index() as isize + by).rem_euclid(n)) as usize]
    }
}

/// What the keyboard is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// Navigating.
    Normal,
    /// Typing the events filter.
    Filter,
    /// Asking before committing this permit.
    Confirm(String),
    /// Showing the keys.
    Help,
}

/// What a key asks the host to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Nothing beyond redrawing.
    None,
    /// Leave.
    Quit,
    /// Commit this permit (confirmed).
    Commit(String),
    /// Cancel this permit.
    Cancel(String),
    /// Confirm this permit for whoever waits on it (the confirmation policy).
    Confirm(String),
}

/// The dashboard.
#[derive(Debug)]
pub struct App {
    /// What the events said.
    pub model: Model,
    /// The pane with focus.
    pub focus: Pane,
    /// The selected row of each pane (for Events: how many lines up from the newest).
    pub selected: [usize; 7],
    /// The events filter (case-insensitive substring of the kind or the text).
    pub filter: String,
    /// What the keyboard is doing.
    pub mode: Mode,
    /// The last action's outcome, shown in the footer.
    pub status: Option<String>,
    /// Where the events come from, shown in the header.
    pub source: String,
}

impl App {
    /// A dashboard over events from `source` (its description).
    pub fn new(source: impl Into<String>) -> Self {
        Self {
            model: Model::default(),
            focus: Pane::Pools,
            selected: [0; 7],
            filter: String::new(),
            mode: Mode::Normal,
            status: None,
            source: source.into(),
        }
    }

    /// The selected row of `pane`.
    pub fn selection(&self, pane: Pane) -> usize {
        self.selected[pane.index()]
    }

    /// How many rows `pane` has to select from.
    fn rows(&self, pane: Pane) -> usize {
        let m = &self.model;
        match pane {
            Pane::Pools => m.pools.len(),
            Pane::Prices => m.prices.len(),
            Pane::Positions => m.positions.len(),
            Pane::Permits => m.permits.len(),
            Pane::Tools => m.runs.len(),
            Pane::Alerts => m.alerts.len(),
            Pane::Events => self.filtered_log().count(),
        }
    }

    /// The events log lines the filter lets through, oldest first.
    pub fn filtered_log(&self) -> impl Iterator<Item = &crate::model::Line> {
        let needle = self.filter.to_lowercase();
        self.model.log.iter().filter(move |l| {
            needle.is_empty()
                || l.kind.to_lowercase().contains(&needle)
                || l.text.to_lowercase().contains(&needle)
        })
    }

    /// The permit the Permits pane has selected.
    pub fn selected_permit(&self) -> Option<&crate::model::PermitRow> {
        let permits = &self.model.permits;
        permits.get(self.selection(Pane::Permits).min(permits.len().saturating_sub(1)))
    }

    fn select(&mut self, by: isize) {
        let rows = self.rows(self.focus);
        let i = self.focus.index();
        self.selected[i] = if rows == 0 {
            0
        } else {
            (self.selected[i].min(rows - 1) as isize + by).clamp(0, rows as isize - 1) as usize
        };
    }

    /// Handle one key.
    pub fn key(&mut self, key: KeyEvent) -> Action {
        if key.modifiers.contains(KeyModifiers::CONTROL) && key.code == KeyCode::Char('c') {
            return Action::Quit;
        }
        match self.mode.clone() {
            Mode::Help => {
                self.mode = Mode::Normal;
                if key.code == KeyCode::Char('q') {
                    return Action::Quit;
                }
            }
            Mode::Filter => match key.code {
                KeyCode::Enter => self.mode = Mode::Normal,
                KeyCode::Esc => {
                    self.filter.clear();
                    self.mode = Mode::Normal;
                }
                KeyCode::Backspace => {
                    self.filter.pop();
                }
                KeyCode::Char(c) if !c.is_control() => self.filter.push(c),
                _ => {}
            },
            Mode::Confirm(id) => {
                self.mode = Mode::Normal;
                if matches!(key.code, KeyCode::Char('y') | KeyCode::Char('Y')) {
                    self.status = Some(format!("committing {id}…"));
                    return Action::Commit(id);
                }
                self.status = Some(format!("{id} not committed"));
            }
            Mode::Normal => match key.code {
                KeyCode::Char('q') => return Action::Quit,
                KeyCode::Tab => self.focus = self.focus.step(1),
                KeyCode::BackTab => self.focus = self.focus.step(-1),
                // Events count up from the newest line: Up goes back in time.
                KeyCode::Up | KeyCode::Char('k') if self.focus == Pane::Events => self.select(1),
                KeyCode::Down | KeyCode::Char('j') if self.focus == Pane::Events => self.select(-1),
                KeyCode::Up | KeyCode::Char('k') => self.select(-1),
                KeyCode::Down | KeyCode::Char('j') => self.select(1),
                KeyCode::Char('/') => {
                    self.mode = Mode::Filter;
                    self.focus = Pane::Events;
                }
                KeyCode::Char('?') => self.mode = Mode::Help,
                KeyCode::Esc => {
                    self.filter.clear();
                    self.status = None;
                }
                KeyCode::Char('c') | KeyCode::Char('x') | KeyCode::Char('y')
                    if self.focus != Pane::Permits =>
                {
                    self.status = Some("select a permit first: tab to the Permits pane".into());
                }
                KeyCode::Char('c') => match self.selected_permit() {
                    Some(p) => self.mode = Mode::Confirm(p.permit_id.clone()),
                    None => self.status = Some("no open permit to commit".into()),
                },
                KeyCode::Char('y') => match self.selected_permit() {
                    Some(p) if p.held_by.is_some() => {
                        let id = p.permit_id.clone();
                        self.status = Some(format!("confirming {id}…"));
                        return Action::Confirm(id);
                    }
                    Some(p) => self.status = Some(format!("{} is not held for confirmation", p.permit_id)),
                    None => self.status = Some("no open permit to confirm".into()),
                },
                KeyCode::Char('x') => match self.selected_permit() {
                    Some(p) => {
                        let id = p.permit_id.clone();
                        self.status = Some(format!("cancelling {id}…"));
                        return Action::Cancel(id);
                    }
                    None => self.status = Some("no open permit to cancel".into()),
                },
                _ => {}
            },
        }
        Action::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::PermitRow;

    fn press(app: &mut App, code: KeyCode) -> Action {
        app.key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    fn permit(id: &str) -> PermitRow {
        PermitRow {
            permit_id: id.into(),
            kind: "swap".into(),
            tool: "uniswap_swap".into(),
            expected: String::new(),
            risk_tier: "medium".into(),
            expires_at_ms: 0,
            held_by: None,
        }
    }

    #[test]
    fn tab_cycles_the_panes_both_ways() {
        let mut app = App::new("test");
        for _ in 0..7 {
            press(&mut app, KeyCode::Tab);
        }
        assert_eq!(app.focus, Pane::Pools);
        press(&mut app, KeyCode::BackTab);
        assert_eq!(app.focus, Pane::Events);
    }

    #[test]
    fn commit_asks_first_and_cancel_does_not() {
        let mut app = App::new("test");
        app.model.permits = vec![permit("permit-a"), permit("permit-b")];
        assert_eq!(press(&mut app, KeyCode::Char('c')), Action::None, "not on the Permits pane");
        app.focus = Pane::Permits;
        press(&mut app, KeyCode::Down);
        assert_eq!(press(&mut app, KeyCode::Char('c')), Action::None);
        assert_eq!(app.mode, Mode::Confirm("permit-b".into()));
        assert_eq!(press(&mut app, KeyCode::Char('n')), Action::None, "n keeps it");
        press(&mut app, KeyCode::Char('c'));
        assert_eq!(press(&mut app, KeyCode::Char('y')), Action::Commit("permit-b".into()));
        assert_eq!(press(&mut app, KeyCode::Char('x')), Action::Cancel("permit-b".into()));
        app.model.permits.truncate(1);
        assert_eq!(
            press(&mut app, KeyCode::Char('x')),
            Action::Cancel("permit-a".into()),
            "selection clamps"
        );
    }

    #[test]
    fn the_filter_is_typed_after_slash_and_q_inside_it_is_text() {
        let mut app = App::new("test");
        press(&mut app, KeyCode::Char('/'));
        for c in "swaq".chars() {
            assert_eq!(press(&mut app, KeyCode::Char(c)), Action::None);
        }
        press(&mut app, KeyCode::Backspace);
        press(&mut app, KeyCode::Enter);
        assert_eq!((app.filter.as_str(), app.focus), ("swa", Pane::Events));
        assert_eq!(press(&mut app, KeyCode::Char('q')), Action::Quit);
    }

    #[test]
    fn y_confirms_only_a_held_permit_and_only_in_the_permits_pane() {
        let mut app = App::new("test");
        app.model.permits = vec![
            permit("permit-a"),
            PermitRow { held_by: Some("confirm = \"always\"".into()), ..permit("permit-b") },
        ];
        assert_eq!(press(&mut app, KeyCode::Char('y')), Action::None, "not in the Permits pane");
        app.focus = Pane::Permits;
        assert_eq!(press(&mut app, KeyCode::Char('y')), Action::None);
        assert!(app.status.as_deref().is_some_and(|s| s.contains("not held")), "{:?}", app.status);
        press(&mut app, KeyCode::Down);
        assert_eq!(press(&mut app, KeyCode::Char('y')), Action::Confirm("permit-b".into()));
    }
}
