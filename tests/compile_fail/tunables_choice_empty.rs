use bt_core::tunables;

tunables! { SQUAD_TUNING:
    /// How soldiers hold themselves.
    STANCE: enum Stance {} = Crouch;
}

fn main() {}
