use bt_core::tunables;

tunables! { SQUAD_TUNING:
    FLEE_BELOW: f32 = 0.25, 0.0..=1.0;
}

fn main() {}
