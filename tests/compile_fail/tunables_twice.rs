use bt_core::tunables;

tunables! { SQUAD_TUNING:
    CLIP: i64 = 6, 1..=30;
    CLIP: i64 = 8, 1..=30;
}

fn main() {}
