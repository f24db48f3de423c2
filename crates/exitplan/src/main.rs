//! The `exitplan` command line.

fn main() {
    println!("exitplan");
}
