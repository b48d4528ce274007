// The Observatory's entry: React on #root.
import { createRoot } from 'react-dom/client'
import { App } from './App'
import { useStore } from './store'
import './style.css'

// a read-only handle on what the view shows, for the browser console and the browser tests
;(window as Window & { __observatory?: unknown }).__observatory = { state: () => useStore.getState().state, subscribe: useStore.subscribe }

createRoot(document.getElementById('root')!).render(<App />)
