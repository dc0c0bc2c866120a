use bt_core::tunables;

tunables! { SQUAD_TUNING:
    /// Health fraction below which a soldier flees.
    FLEE_BELOW: f64 = 1.5, 0.0..=1.0;
}

fn main() {}
