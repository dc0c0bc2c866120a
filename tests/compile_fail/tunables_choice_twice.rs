use bt_core::tunables;

tunables! { SQUAD_TUNING:
    /// How soldiers hold themselves.
    STANCE: enum Stance { Crouch, Stand, Crouch } = Stand;
}

fn main() {}
